package integration

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
)

// TestAKillBetweenAJournalAppendAndTheRunsRowLosesNothing SIGKILLs the
// real binary while runs wait in an idempotent tool. A run's step that
// sent its call is a row of the run journal, and the run's row in runs
// still holds the run as it was created, with no call in flight: the row
// is written again only at a change of status, which folds the journal.
// The test reads the killed store's tables to find the runs the kill left
// between the two, then restarts the binary on them: each resumes from
// the step its journal holds (its call in flight, made again) and
// completes, its trace read back whole.
func TestAKillBetweenAJournalAppendAndTheRunsRowLosesNothing(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("crash test: starts and kills the real binary")
	}
	is := is.New(t)
	var between []string
	cr := crashWith(t, "idle", 16, 10, 2_000, func(dir string) {
		between = journaledOnly(t, filepath.Join(dir, "store", app.DatabaseFile))
	})
	t.Logf("%d runs killed with their last step only in their journal", len(between))
	is.True(len(between) > 0) // the kill fell between a journal append and the runs row
	for _, id := range between {
		is.True(cr.flying[id]) // the store reads the journal's step: its call in flight
		run := settled(t, cr.c, id)
		is.Equal(run.Status, "completed")              // resumed from its journal, then completed
		is.True(resumedAfterTheStop(t, cr.second, id)) // from the step the journal held
		is.True(run.Output["slept_ms"] != nil)         // with the call's answer
		is.True(!cr.finished[id])                      // it had not ended before the kill
		var trace p.RunResult
		is.NoErr(cr.c.Call(testContext(t), p.MethodRunsTrace, p.TraceParams{RunID: id}, &trace))
		is.Equal(len(trace.Trace), 1) // its one step's entry, read back whole
		is.Equal(trace.TraceCount, 1)
	}
}

// journaledOnly reads the database file of a killed mcpflow, read-only:
// the running runs whose runs row has no call in flight while the last
// row of their journal has one.
func journaledOnly(t *testing.T, path string) []string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	is.NoErr(err)
	defer db.Close()
	rows, err := db.QueryContext(context.Background(), `
		SELECT runs.id FROM runs
		WHERE runs.status = 'running'
		  AND COALESCE(json_extract(runs.record, '$.checkpoint.calls'), '{}') = '{}'
		  AND (SELECT json_extract(j.run, '$.checkpoint.calls') FROM run_journal AS j
		       WHERE j.key >> 32 = runs.rowid ORDER BY j.key DESC LIMIT 1) <> '{}'`)
	is.NoErr(err)
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		is.NoErr(rows.Scan(&id))
		ids = append(ids, id)
	}
	is.NoErr(rows.Err())
	return ids
}
