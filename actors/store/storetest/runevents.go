package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// calling returns r with a checkpoint whose calls in flight are those
// named, each a call of node "n<id>".
func calling(r store.Run, ids ...string) store.Run {
	calls := map[string]workflow.Call{}
	for _, id := range ids {
		calls[id] = workflow.Call{ID: id, FrameID: "root", NodeID: "n" + id, Capability: "web.fetch", Input: workflow.Object{}}
	}
	r.Checkpoint = &workflow.Snapshot{Status: workflow.StatusRunning, Calls: calls}
	return r
}

// readEvents reads every event of a run and checks the last sequence
// number that comes with them.
func readEvents(t *testing.T, s store.Store, runID string) []store.RunEvent {
	t.Helper()
	is := is.New(t)
	is.Helper()
	events, last, err := s.ReadRunEvents(t.Context(), runID, 0, 0)
	is.NoErr(err)
	is.Equal(last, int64(len(events))) // the last sequence number is the count: no gap
	for i, e := range events {
		is.Equal(e.Seq, int64(i+1)) // numbered from 1 in order
		is.Equal(e.RunID, runID)
	}
	return events
}

// kinds lists the kinds of events, with the node or status each is about.
func kinds(events []store.RunEvent) []string {
	out := []string{}
	for _, e := range events {
		switch {
		case e.Step != nil:
			out = append(out, e.Kind+" "+e.Step.NodeID)
		case e.Status != nil:
			out = append(out, e.Kind+" "+e.Status.Status)
		default:
			out = append(out, e.Kind)
		}
	}
	return out
}

// testRunEvents follows one run through every kind of change and checks
// the events each commit appends, in order and numbered without a gap.
func testRunEvents(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	r := run("run-1", store.RunRunning, t0)
	is.NoErr(s.CreateRun(ctx, r, nil))
	is.Equal(kinds(readEvents(t, s, "run-1")), []string{"status running"}) // a new run: its status

	// The first step ends and two calls go out.
	r.UpdatedAt = t0.Add(time.Second)
	first := entry("fetch", "parse")
	first.StateChanges = workflow.Object{"state.page": "x", "state.count": 1.0}
	r = progress(ctx, is, s, calling(r, "c2", "c10"), first)
	// One call returns; the other is still out; a third goes out.
	r = progress(ctx, is, s, calling(r, "c10", "c11"), entry("nc2", "parse"))
	// An interrupt.
	r.Status = store.RunInterrupted
	interrupt := &workflow.Interrupt{ID: "i1", FrameID: "root", NodeID: "approve", Kind: "approval",
		Payload: workflow.Object{"message": "Ship it?"}, Resumable: true, Outcomes: []string{"submitted"},
		RequestSchema: workflow.Object{}, ResumeSchema: workflow.Object{}}
	r.Interrupt = interrupt
	r = progress(ctx, is, s, calling(r), entry("nc10", "approve"), entry("nc11", "approve"))
	// The resume, then the end.
	r.Status, r.Interrupt = store.RunRunning, nil
	r = progress(ctx, is, s, r)
	r.Status, r.Outcome, r.Output = store.RunCompleted, ptr("ok"), workflow.Object{"count": 2.0}
	r.UpdatedAt = t0.Add(time.Minute)
	progress(ctx, is, s, r, entry("approve", workflow.End))

	events := readEvents(t, s, "run-1")
	is.Equal(kinds(events), []string{
		"status running",
		"step_finished fetch", "step_started nc2", "step_started nc10", // calls in the order issued
		"step_finished nc2", "step_started nc11",
		"step_finished nc10", "step_finished nc11", "interrupted", "status interrupted",
		"status running",
		"step_finished approve", "status completed",
	})
	is.Equal(*events[1].Step, store.RunEventStep{FrameID: "root", NodeID: "fetch", TraceIndex: ptr(0), StepType: workflow.NodeCall,
		Outcome: workflow.OutcomeOK, NextNodeID: "parse", StateChanges: []string{"state.count", "state.page"}}) // the paths changed, sorted
	is.Equal(events[1].TimestampEpochMs, t0.Add(time.Second).UnixMilli())
	is.Equal(*events[2].Step, store.RunEventStep{FrameID: "root", NodeID: "nc2", CallID: "c2", Capability: "web.fetch"})
	is.Equal(*events[7].Step.TraceIndex, 3)
	is.Equal(events[8].Interrupt, interrupt)
	is.Equal(*events[9].Status, store.RunEventStatus{Status: store.RunInterrupted, TraceCount: 4})
	is.Equal(*events[12].Status, store.RunEventStatus{Status: store.RunCompleted, Terminal: true, Outcome: ptr("ok"),
		Output: workflow.Object{"count": 2.0}, TraceCount: 5})

	// Paging: after a sequence number, up to a limit.
	page, last, err := s.ReadRunEvents(ctx, "run-1", 3, 2)
	is.NoErr(err)
	is.Equal(page, events[3:5])
	is.Equal(last, int64(13))
	page, last, err = s.ReadRunEvents(ctx, "run-1", 13, 10)
	is.NoErr(err)
	is.Equal(len(page), 0) // past the end
	is.Equal(last, int64(13))
	_, _, err = s.ReadRunEvents(ctx, "run-missing", 0, 0)
	is.True(errors.Is(err, store.ErrNotFound))
}

// testRunEventsAtomic checks that a rejected commit appends no event and
// that recovery appends the failure.
func testRunEventsAtomic(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	r := calling(run("run-1", store.RunRunning, t0), "c1")
	is.NoErr(s.CreateRun(ctx, r, nil))
	is.Equal(kinds(readEvents(t, s, "run-1")), []string{"status running", "step_started nc1"}) // running before its first step

	stale := r
	stale.Status = store.RunCompleted
	stale.TraceCount = 2
	err := s.RecordProgress(ctx, stale, []workflow.TraceEntry{entry("nc1", workflow.End)})
	is.True(errors.Is(err, store.ErrConflict))
	is.Equal(len(readEvents(t, s, "run-1")), 2) // a rejected commit appends nothing

	other := run("run-2", store.RunCompleted, t0)
	is.NoErr(s.CreateRun(ctx, other, nil))
	_, err = s.RecoverRunning(ctx, t0.Add(time.Hour))
	is.NoErr(err)
	events := readEvents(t, s, "run-1")
	is.Equal(kinds(events), []string{"status running", "step_started nc1", "status failed"})
	is.True(events[2].Status.Terminal)
	is.True(events[2].Status.Error != nil) // says why
	is.Equal(events[2].TimestampEpochMs, t0.Add(time.Hour).UnixMilli())
	is.Equal(kinds(readEvents(t, s, "run-2")), []string{"status completed"}) // finished runs are left alone
}
