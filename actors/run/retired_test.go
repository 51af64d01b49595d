package run_test

import (
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/fakes"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// TestACallAStoppedSessionActorNeverSentIsAskedAgainOfItsSuccessor
// queues a run's call behind a long one on a session that takes one call
// at a time, then changes the connection's definition, which stops that
// session actor: the long call is cut off, the run's, never sent, is
// refused as retired, and the run asks it again of the new session actor,
// where it completes.
func TestACallAStoppedSessionActorNeverSentIsAskedAgainOfItsSuccessor(t *testing.T) {
	is := is.New(t)
	w := newWorldTuned(t, nil, nil, "", func(o *supervisor.Options) { o.Session.MaxInFlight = 1 })
	plan := w.plan(t, "counter")

	long := reply.Expect[session.ToolResult](w.replies)
	w.sup.Lines().Call(w.engine, w.sup.PID(), session.CallTool{Connection: "fake.one", Tool: "sleep",
		Arguments: fakes.CallArguments(map[string]any{"ms": 60_000}), Deadline: time.Now().Add(patience), Reply: long.To()})
	is.True(w.rec.WaitForToolCalls(1, patience)) // the long call holds the session's one slot

	l := w.launch(t, "run-retired", plan, workflow.Object{}, workflow.Options{}, time.Time{})
	poll.For(t, "the run's call queued behind the long one", patience, func() bool {
		sts, err := w.sup.Statuses(wait(t))
		return err == nil && len(sts) == 1 && sts[0].CallsQueued == 1
	})
	_, err := w.sup.Reconcile(wait(t), []config.Connection{{Kind: "mcp", ID: "fake.one",
		Transport: config.Transport{Kind: "inmemory", Env: map[string]string{"MODE": "new"}}}})
	is.NoErr(err) // the session actor is replaced

	cut, err := long.Wait(wait(t))
	is.NoErr(err)
	is.True(errors.Is(cut.Error.Err(), session.ErrUnavailable)) // the call that was sent is cut off
	is.True(!errors.Is(cut.Error.Err(), session.ErrRetired))    // not asked again: it may have run

	final := l.stopped(t)
	is.Equal(final.Status, store.RunCompleted) // the run's call was asked again, and answered
	trace, err := w.store.ReadTrace(wait(t), "run-retired", 0, 0)
	is.NoErr(err)
	is.Equal(trace[0].Attempts, 2)          // refused once, unsent, then sent
	is.Equal(trace[0].Output["count"], 1.0) // by the new session's upstream
}
