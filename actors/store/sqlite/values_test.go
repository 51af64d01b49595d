package sqlite_test

import (
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// bigRun stores run id, finished at end, with a value of 64 KiB in its
// input, trace and output, and a step_finished event; it returns the run
// as stored.
func bigRun(t *testing.T, s store.Store, id string, end time.Time) store.Run {
	is := is.New(t)
	big := strings.Repeat("z", 64<<10)
	r := store.Run{ID: id, DeploymentID: "dep", ArtifactID: "wf", ArtifactVersion: 1, Status: store.RunRunning,
		ResumeReadiness: "not_applicable", Input: workflow.Object{"message": big}, CreatedAt: end, UpdatedAt: end}
	is.NoErr(s.CreateRun(t.Context(), r, nil))
	r.Status, r.Outcome, r.Output, r.TraceCount = store.RunCompleted, new(string), workflow.Object{"message": big}, 1
	is.NoErr(s.RecordProgress(t.Context(), r, []workflow.TraceEntry{{FrameID: "root", NodeID: "call", StepType: workflow.NodeCall,
		Outcome: workflow.OutcomeOK, NextNodeID: workflow.End, ResolvedInput: workflow.Object{"message": big}, Output: workflow.Object{"message": big}}}))
	return r
}

// rawDB opens the store's database file beside it, closed when t ends.
func rawDB(t *testing.T, path string) *sql.DB {
	db, err := sql.Open("sqlite", path)
	is.New(t).NoErr(err)
	t.Cleanup(func() { is.New(t).NoErr(db.Close()) })
	return db
}

// count is the number of rows of a table.
func count(t *testing.T, db *sql.DB, table string) int {
	var n int
	is.New(t).NoErr(db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n))
	return n
}

func TestARunsLargeValueIsOneRowAndGoesWhenTheRunIsPruned(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "mcpflow.db")
	s, err := sqlite.Open(t.Context(), path, sqlite.WithStoreOptions(store.WithRetention(time.Hour)))
	is.NoErr(err)
	t.Cleanup(func() { is.NoErr(s.Close()) })
	end := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	bigRun(t, s, "run-big", end)
	db := rawDB(t, path)
	is.Equal(count(t, db, "run_values"), 1) // the value, once, for its five places

	n, err := s.PruneRuns(t.Context(), end.Add(2*time.Hour), store.PruneLimit{Runs: 10, Rows: 100})
	is.NoErr(err)
	is.Equal(n, 1)
	is.Equal(count(t, db, "run_values"), 0) // pruned with its run
}

// TestRowsWrittenBeforeValuesWereKeptOnceReadAsBefore rewrites a run's
// rows as the schema before version 7 had them, each record, entry and
// event its whole JSON, with no run_values: every read gives the same.
func TestRowsWrittenBeforeValuesWereKeptOnceReadAsBefore(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "mcpflow.db")
	s, err := sqlite.Open(ctx, path)
	is.NoErr(err)
	t.Cleanup(func() { is.NoErr(s.Close()) })
	want := bigRun(t, s, "run-big", time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	trace, err := s.ReadTrace(ctx, "run-big", 0, 0)
	is.NoErr(err)
	events, _, err := s.ReadRunEvents(ctx, "run-big", 0, 0)
	is.NoErr(err)

	db := rawDB(t, path)
	whole := func(v any) string {
		b, err := json.Marshal(v)
		is.NoErr(err)
		return string(b)
	}
	_, err = db.Exec(`UPDATE runs SET record = ? WHERE id = 'run-big'`, whole(want))
	is.NoErr(err)
	_, err = db.Exec(`UPDATE run_trace SET entry = ? WHERE run_id = 'run-big' AND seq = 0`, whole(trace[0]))
	is.NoErr(err)
	for _, e := range events {
		_, err = db.Exec(`UPDATE run_events SET record = ? WHERE run_id = 'run-big' AND seq = ?`, whole(e), e.Seq)
		is.NoErr(err)
	}
	_, err = db.Exec(`DELETE FROM run_values`)
	is.NoErr(err)

	got, err := s.GetRun(ctx, "run-big")
	is.NoErr(err)
	is.Equal(got, want) // the record
	gotTrace, err := s.ReadTrace(ctx, "run-big", 0, 0)
	is.NoErr(err)
	is.Equal(gotTrace, trace) // the trace
	gotEvents, _, err := s.ReadRunEvents(ctx, "run-big", 0, 0)
	is.NoErr(err)
	is.Equal(gotEvents, events) // the events, step_finished among them
	is.Equal(gotEvents[1].Kind, store.RunEventStepFinished)
}
