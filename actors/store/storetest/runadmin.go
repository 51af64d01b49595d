package storetest

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// A run is created with the first entries of its trace in one commit,
// with their events.
func testCreateRunWithTrace(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	r := run("run-1", store.RunRunning, t0)
	r.TraceCount = 2
	is.NoErr(s.CreateRun(ctx, r, []workflow.TraceEntry{entry("fetch", "parse"), entry("parse", "save")}))

	trace, err := s.ReadTrace(ctx, "run-1", 0, 0)
	is.NoErr(err)
	is.Equal(len(trace), 2) // both entries are stored
	is.Equal(trace[1].NodeID, "parse")
	events, last, err := s.ReadRunEvents(ctx, "run-1", 0, 0)
	is.NoErr(err)
	is.Equal(last, int64(3)) // the run was running before its first steps
	is.Equal(kinds(events), []string{"status running", "step_finished fetch", "step_finished parse"})

	// A later commit goes on after them.
	r.TraceCount, r.UpdatedAt = 3, t0.Add(time.Second)
	is.NoErr(s.RecordProgress(ctx, r, []workflow.TraceEntry{entry("save", workflow.End)}))
	trace, err = s.ReadTrace(ctx, "run-1", 0, 0)
	is.NoErr(err)
	is.Equal(len(trace), 3)
}

// A run's commits append its admin events in the same transaction: it
// started, it resumed after an interrupt, it ended; a pause or a step
// records none.
func testRunAdminEvents(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	since, err := s.LastEventSeq(ctx)
	is.NoErr(err)
	appended := func() []store.Event {
		t.Helper()
		events, err := s.ListEvents(ctx, since, 0)
		is.NoErr(err)
		if len(events) > 0 {
			since = events[len(events)-1].Seq
		}
		return events
	}
	kindsOf := func(events []store.Event) []string {
		out := []string{}
		for _, e := range events {
			out = append(out, e.Kind)
		}
		return out
	}

	r := run("run-1", store.RunRunning, t0)
	is.NoErr(s.CreateRun(ctx, r, nil))
	is.Equal(kindsOf(appended()), []string{store.EventRunStarted})
	r = progress(ctx, is, s, r, entry("fetch", "ask"))
	is.Equal(kindsOf(appended()), []string{}) // a step records none

	r.Status, r.UpdatedAt = store.RunInterrupted, t0.Add(time.Second)
	r = progress(ctx, is, s, r)
	is.Equal(kindsOf(appended()), []string{}) // nor does a pause

	r.Status, r.UpdatedAt = store.RunRunning, t0.Add(2*time.Second)
	r = progress(ctx, is, s, r)
	is.Equal(kindsOf(appended()), []string{store.EventRunResumed})

	r.Status, r.Outcome, r.UpdatedAt = store.RunCompleted, ptr("ok"), t0.Add(3*time.Second)
	progress(ctx, is, s, r, entry("ask", workflow.End))
	ended := appended()
	is.Equal(kindsOf(ended), []string{store.EventRunCompleted})
	e := ended[0]
	is.Equal(*e.CapabilityID, "workflow.wf.v1")
	is.Equal(*e.WorkflowName, "wf")
	is.Equal(e.TimestampEpochMs, t0.Add(3*time.Second).UnixMilli())
	is.Equal(e.Payload, map[string]any{
		"run_id": "run-1", "deployment_id": "dep", "artifact_id": "wf", "artifact_version": 1.0,
		"status": store.RunCompleted, "trace_count": 2.0, "outcome": "ok",
	})

	// A run cancelled in its interrupt did not resume: it failed.
	other := run("run-2", store.RunInterrupted, t0)
	is.NoErr(s.CreateRun(ctx, other, nil))
	other.Status, other.Error, other.UpdatedAt = store.RunCancelled, ptr("cancelled"), t0.Add(time.Second)
	progress(ctx, is, s, other)
	is.Equal(kindsOf(appended()), []string{store.EventRunStarted, store.EventRunFailed})
}
