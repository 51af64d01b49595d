package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// testLargeValues commits a run whose one large value (a tool's result)
// is in its input, its state, its checkpoint, its trace and its output,
// as a durable store keeps once per run (store.ValueMin): every read gives
// it back whole, recovery included.
func testLargeValues(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	big := strings.Repeat(`a "line" of text \ `, store.ValueMin/8)
	small := strings.Repeat("y", store.ValueMin/4)

	r := run("run-big", store.RunRunning, t0)
	r.Input = workflow.Object{"message": big}
	r.Checkpoint = &workflow.Snapshot{Status: workflow.StatusRunning, Scopes: map[string]*workflow.Scope{
		"root": {ID: "root", Input: workflow.Object{"message": big}, State: workflow.Object{}}}}
	is.NoErr(s.CreateRun(ctx, r, nil))

	step := entry("call", "save")
	step.ResolvedInput = workflow.Object{"message": big}
	step.Output = workflow.Object{"content": []any{map[string]any{"type": "text", "text": big}}, "small": small}
	step.StateChanges = workflow.Object{"state.result": big}
	r.CurrentStep, r.UpdatedAt = "save", t0.Add(time.Second)
	r.State = map[string]any{"result": big, "small": small}
	r.Checkpoint.Scopes["root"].State = workflow.Object{"result": big, "small": small}
	r = progress(ctx, is, s, r, step)
	got, err := s.GetRun(ctx, "run-big")
	is.NoErr(err)
	is.Equal(got, r) // the record reads back whole

	recovered, err := s.RecoverRunning(ctx, t0.Add(time.Hour))
	is.NoErr(err)
	is.Equal(len(recovered), 1)
	is.Equal(recovered[0].State, r.State) // recovery reads and keeps it
	is.Equal(recovered[0].Checkpoint, r.Checkpoint)
	r = recovered[0]

	r.Status, r.Outcome, r.Output = store.RunCompleted, ptr("ok"), workflow.Object{"result": big}
	r.UpdatedAt = t0.Add(2 * time.Hour)
	last := entry("save", workflow.End)
	last.ResolvedInput = workflow.Object{"value": big}
	r = progress(ctx, is, s, r, last)

	got, err = s.GetRun(ctx, "run-big")
	is.NoErr(err)
	is.Equal(got, r)
	list, _, err := s.ListRuns(ctx, store.RunQuery{})
	is.NoErr(err)
	is.Equal(list, []store.Run{r}) // a list reads it back whole
	trace, err := s.ReadTrace(ctx, "run-big", 0, 0)
	is.NoErr(err)
	is.Equal(trace, []workflow.TraceEntry{step, last}) // so does the trace
	events, _, err := s.ReadRunEvents(ctx, "run-big", 0, 0)
	is.NoErr(err)
	end := events[len(events)-1]
	is.True(end.Status != nil)
	is.Equal(end.Status.Output, workflow.Object{"result": big}) // and the last event
}
