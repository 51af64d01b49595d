package runs_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/fakes"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// A direct tool call is answered before its admin events are appended:
// they go through the manager's appender, off the call's path, its start
// before its end, and are in the log once the store takes them.
func TestADirectCallIsAnsweredBeforeItsAdminEventsAreAppended(t *testing.T) {
	is := is.New(t)
	var (
		held     *fakes.HeldEvents
		appender *audit.Appender
		cfg      runs.Config
	)
	n := newNodeTuned(t, func(c *runs.Config) {
		held = fakes.NewHeldEvents(c.Store)
		appender = audit.StartAppender(held, audit.AppenderOptions{})
		c.Audit, cfg = appender, *c
		t.Cleanup(func() { held.Open(); _ = appender.Close(context.Background()) })
	})
	ctx := bounded(t)
	counter, ok := cfg.Catalogs.Tool("fake.one", "counter")
	is.True(ok) // fake.one has a counter tool

	outcome, _, err := n.manager.CallNodeSpec(ctx, counter, workflow.Object{})
	is.NoErr(err) // answered before its events reach the store
	is.Equal(outcome, workflow.OutcomeOK)
	is.Equal(directCallEvents(t, n), []string{}) // nothing in the log yet

	for _, kind := range []string{audit.ToolCallStarted, audit.ToolCallCompleted} {
		e, through, err := held.Held(ctx)
		is.NoErr(err)          // the event reaches the store
		is.Equal(e.Kind, kind) // the start first
		through()
	}
	is.NoErr(appender.Close(ctx)) // drained
	is.Equal(directCallEvents(t, n), []string{audit.ToolCallStarted, audit.ToolCallCompleted})
}

// directCallEvents are the kinds of the direct calls' events in n's admin
// event log, in order.
func directCallEvents(t *testing.T, n *node) []string {
	t.Helper()
	evs, err := n.store.ListEvents(bounded(t), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	kinds := []string{}
	for _, e := range evs {
		if e.Kind == audit.ToolCallStarted || e.Kind == audit.ToolCallCompleted {
			kinds = append(kinds, e.Kind)
		}
	}
	return kinds
}

// A direct call that its session actor stopped before sending it (queued
// behind another when the connection's definition changed) is asked
// again, once, of the connection's next session actor, as a run's step
// is; the call that had been sent is cut off, not asked again.
func TestADirectCallAStoppedSessionActorNeverSentIsAskedAgain(t *testing.T) {
	is := is.New(t)
	var cfg runs.Config
	n := newNodeSupervised(t, func(o *supervisor.Options) { o.Session.MaxInFlight = 1 }, func(c *runs.Config) {
		c.CallTimeout = time.Minute // the long call is cut off by the change, not by its deadline
		cfg = *c
	})
	ctx := bounded(t)
	sleep, ok := cfg.Catalogs.Tool("fake.one", "sleep")
	is.True(ok) // fake.one has a sleep tool
	counter, ok := cfg.Catalogs.Tool("fake.one", "counter")
	is.True(ok) // and a counter
	_, out, err := n.manager.CallNodeSpec(ctx, counter, workflow.Object{})
	is.NoErr(err)
	is.Equal(out["count"], 1.0) // the first session's upstream has counted once

	type answer struct {
		output workflow.Object
		err    error
	}
	call := func(c catalog.Capability, input workflow.Object) <-chan answer {
		ch := make(chan answer, 1)
		go func() {
			_, out, err := n.manager.CallNodeSpec(ctx, c, input)
			ch <- answer{out, err}
		}()
		return ch
	}
	status := func() session.Status {
		sts, err := n.sup.Statuses(ctx)
		is.NoErr(err)
		return sts[0]
	}
	long := call(sleep, workflow.Object{"ms": 60_000})
	poll.For(t, "the long call in flight", patience, func() bool { return status().CallsInFlight == 1 })
	queued := call(counter, workflow.Object{})
	poll.For(t, "the counter queued behind it", patience, func() bool { return status().CallsQueued == 1 })
	_, err = n.sup.Reconcile(ctx, []config.Connection{{Kind: "mcp", ID: "fake.one",
		Transport: config.Transport{Kind: "inmemory", Env: map[string]string{"MODE": "new"}}}})
	is.NoErr(err) // the session actor is replaced

	for _, a := range []struct {
		ch   <-chan answer
		sent bool
	}{{long, true}, {queued, false}} {
		select {
		case got := <-a.ch:
			if a.sent {
				is.True(errors.Is(got.err, session.ErrUnavailable)) // the call that was sent is cut off
				continue
			}
			is.NoErr(got.err)                  // the one never sent was asked again
			is.Equal(got.output["count"], 1.0) // of the new session's upstream
		case <-time.After(patience):
			t.Fatal("a direct call was not answered")
		}
	}
}
