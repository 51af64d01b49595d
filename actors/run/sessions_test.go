package run_test

import (
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/run"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// countTwice counts on fake.one, waits in an interrupt, and counts again.
const countTwice = `{"name":"twice","start":"first","outcomes":["ok","failed"],
	"steps":{"first":{"use":"fake.one.counter"},"ask":{"interrupt":{"kind":"input"}},"second":{"use":"fake.one.counter"},
	  "failed":{"end":{"outcome":"failed"}}},
	"routes":{"first":{"ok":"ask","error":"ask"},"ask":{"submitted":"second"},"second":{"ok":"__end__","error":"failed"}}}`

// interruptedBetweenSessions runs countTwice as run id up to its
// interrupt, then kills fake.one's upstream and waits for the session
// that replaces it; it returns the plan and the interrupted run.
func (w *world) interruptedBetweenSessions(t *testing.T, id string) (workflow.Plan, store.Run) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	plan := w.compileDraft(t, countTwice)
	_, interrupted := w.start(t, id, plan, workflow.Object{})
	is.Equal(interrupted.Status, store.RunInterrupted)
	is.Equal(interrupted.Sessions, []store.RunSession{{Connection: "fake.one", Generation: 1, Instance: interrupted.Sessions[0].Instance}})

	w.mem.KillAll()
	poll.For(t, "fake.one's second session open", patience, func() bool {
		sts, err := w.sup.Statuses(wait(t))
		is.NoErr(err)
		return sts[0].Generation == 2 && sts[0].State == session.StateOpen
	})
	return plan, interrupted
}

// resume resumes the interrupted run of plan, with strict the
// connections bound "on_session_replaced": "fail", and returns its final
// record.
func (w *world) resume(t *testing.T, plan workflow.Plan, interrupted store.Run, strict map[string]bool) store.Run {
	t.Helper()
	is := is.New(t)
	is.Helper()
	targets, err := run.Resolve(workflow.Program{Root: plan}, nil, func(c string) bool { return c == "fake.one" })
	is.NoErr(err)
	done := reply.Expect[run.Stopped](w.replies)
	w.engine.Spawn(run.New(run.Spec{
		Record: interrupted, Resume: &run.Resume{Outcome: "submitted", Payload: workflow.Object{}},
		Program: workflow.Program{Root: plan}, Targets: targets, Strict: strict,
		Supervisor: w.sup.PID(), Lines: w.sup.Lines(), Store: w.store,
		CallTimeout: 2 * time.Second, StoreTimeout: 2 * time.Second, Done: done.To(),
	}), "run", actor.WithID(incarnation(interrupted.ID)))
	stopped, err := done.Wait(wait(t))
	is.NoErr(err) // the resumed run ends
	return stopped.Run
}

// replacedEvents are the session_replaced events of run id.
func (w *world) replacedEvents(t *testing.T, id string) []store.RunEvent {
	t.Helper()
	events, _, err := w.store.ReadRunEvents(wait(t), id, 0, 0)
	is.New(t).NoErr(err)
	var out []store.RunEvent
	for _, e := range events {
		if e.Kind == store.RunEventSessionReplaced {
			out = append(out, e)
		}
	}
	return out
}

func TestARunWhoseStepsLandedOnTwoSessionsGetsASessionReplacedEvent(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	plan, interrupted := w.interruptedBetweenSessions(t, "run-replaced")

	final := w.resume(t, plan, interrupted, nil)
	is.Equal(final.Status, store.RunCompleted) // by default the run goes on
	trace, err := w.store.ReadTrace(wait(t), "run-replaced", 0, 0)
	is.NoErr(err)
	is.Equal(trace[0].Generation, int64(1))
	is.Equal(trace[len(trace)-1].Generation, int64(2)) // each step names its session
	is.Equal(trace[len(trace)-1].Output["count"], 1.0) // the state of the first session is gone

	events := w.replacedEvents(t, "run-replaced")
	is.Equal(len(events), 1)
	is.Equal(*events[0].Session, store.RunEventSession{Connection: "fake.one", OldGeneration: 1, NewGeneration: 2})
	all, _, err := w.store.ReadRunEvents(wait(t), "run-replaced", events[0].Seq, 1)
	is.NoErr(err)
	is.Equal(all[0].Kind, store.RunEventStepFinished) // the step that saw the new session follows
	is.Equal(all[0].Step.NodeID, "second")
	is.Equal(final.Sessions[0].Generation, int64(2))
}

func TestARunBoundToFailOnAReplacedSessionFailsWithoutCallingTheNewOne(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	plan, interrupted := w.interruptedBetweenSessions(t, "run-strict")
	calls := len(w.rec.ToolCalls())

	final := w.resume(t, plan, interrupted, map[string]bool{"fake.one": true})
	is.Equal(final.Status, store.RunFailed)
	is.Equal(*final.Error, `step "second": session_replaced: session of connection "fake.one" was replaced (generation 1 → 2): its state is gone`)
	is.Equal(len(w.rec.ToolCalls()), calls) // no call went to the new session
	events := w.replacedEvents(t, "run-strict")
	is.Equal(len(events), 1) // the run tells what it saw
	is.Equal(events[0].Session.NewGeneration, int64(2))
}

func TestARunBoundToFailGoesOnWhileItsSessionLasts(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	plan := w.compileDraft(t, countTwice)
	_, interrupted := w.start(t, "run-strict-kept", plan, workflow.Object{})
	final := w.resume(t, plan, interrupted, map[string]bool{"fake.one": true})
	is.Equal(final.Status, store.RunCompleted)
	trace, err := w.store.ReadTrace(wait(t), "run-strict-kept", 0, 0)
	is.NoErr(err)
	is.Equal(trace[len(trace)-1].Output["count"], 2.0) // the same session's state
	is.Equal(len(w.replacedEvents(t, "run-strict-kept")), 0)
}
