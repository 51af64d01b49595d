package storetest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// testLiveRunEvents appends the events a call in flight reports
// (step_progress, step_log) between a run's commits: they are numbered
// after the commit's, a later commit numbers its own after them, and a
// run that has ended takes none.
func testLiveRunEvents(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	r := calling(run("run-1", store.RunRunning, t0), "c1")
	is.NoErr(s.CreateRun(ctx, r, nil))
	step := &store.RunEventStep{FrameID: "root", NodeID: "nc1", CallID: "c1"}
	total := 5.0
	is.NoErr(s.AppendRunEvents(ctx, "run-1", []store.RunEvent{
		{Kind: store.RunEventStepProgress, TimestampEpochMs: 7, Step: step, Progress: &store.RunEventProgress{Progress: 1, Total: &total, Message: "one"}},
		{Kind: store.RunEventStepLog, TimestampEpochMs: 8, Step: step, Log: &store.RunEventMessage{Level: "info", Logger: "srv", Data: json.RawMessage(`{"a":1}`)}},
	}))
	is.NoErr(s.AppendRunEvents(ctx, "run-1", nil)) // nothing to append: nothing changes
	r.Status, r.Outcome, r.UpdatedAt = store.RunCompleted, ptr("ok"), t0.Add(time.Second)
	progress(ctx, is, s, calling(r), entry("nc1", workflow.End))

	events := readEvents(t, s, "run-1")
	is.Equal(kinds(events), []string{"status running", "step_started nc1", "step_progress nc1", "step_log nc1", "step_finished nc1", "status completed"})
	is.Equal(*events[2].Progress, store.RunEventProgress{Progress: 1, Total: &total, Message: "one"})
	is.Equal(events[2].TimestampEpochMs, int64(7))
	is.Equal(*events[3].Step, *step)
	is.Equal(events[3].Log.Level, "info")
	is.Equal(string(events[3].Log.Data), `{"a":1}`)

	err := s.AppendRunEvents(ctx, "run-1", []store.RunEvent{{Kind: store.RunEventStepLog, Step: step, Log: &store.RunEventMessage{Level: "info"}}})
	is.True(errors.Is(err, store.ErrConflict)) // no event after the terminal status
	is.Equal(len(readEvents(t, s, "run-1")), 6)
	err = s.AppendRunEvents(ctx, "run-missing", []store.RunEvent{{Kind: store.RunEventStepLog, Step: step, Log: &store.RunEventMessage{Level: "info"}}})
	is.True(errors.Is(err, store.ErrNotFound))
}
