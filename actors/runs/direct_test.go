package runs_test

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/fakes"
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
