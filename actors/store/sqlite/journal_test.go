package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/storetest"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// crashDBEnv names, in the process TestAProcessKilledAfterJournaledSteps
// starts, the database it writes before it exits at once.
const crashDBEnv = "MCPFLOW_TEST_JOURNAL_CRASH_DB"

// crashedRunID is the run that process journals.
const crashedRunID = "run_crashed"

// journalThenExit creates a run in the database at path and commits two
// of its steps, each acknowledged once its journal row is committed (at
// sync full), and ends the process at once: the run's row is left as its
// creation wrote it, and the store is never closed.
func journalThenExit(t *testing.T, path string) {
	ctx := context.Background()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	r := warmRun(t)
	r.ID = crashedRunID
	steps := []func() error{
		func() error { return s.CreateRun(ctx, r, nil) },
		func() error { stepCall(&r, "c1", "count"); return s.RecordProgress(ctx, r, nil) },
		func() error {
			r.TraceCount++
			stepCall(&r, "c2", "again")
			return s.RecordProgress(ctx, r, []workflow.TraceEntry{stepEntry("count", "again")})
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	os.Exit(storetest.ChildExit) // no Close: the process dies between the journal and the run's row
}

// TestAProcessKilledAfterJournaledStepsLosesNothing ends a process right
// after two step commits that only its run's journal holds (its row is
// still its creation's), and opens the store again: every read sees the
// steps, and the recovery that a restart makes folds them into the run.
func TestAProcessKilledAfterJournaledStepsLosesNothing(t *testing.T) {
	if path := os.Getenv(crashDBEnv); path != "" {
		journalThenExit(t, path)
		return
	}
	is := is.New(t)
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "mcpflow.db")
	storetest.EndInChild(t, crashDBEnv, path)

	s, err := Open(ctx, path)
	is.NoErr(err)
	defer s.Close()
	var rowTraceCount, journalRows int
	is.NoErr(s.read.QueryRowContext(ctx, `SELECT trace_count, (SELECT COUNT(*) FROM run_journal) FROM runs WHERE id = ?`, crashedRunID).Scan(&rowTraceCount, &journalRows))
	is.Equal(rowTraceCount, 0) // the run's row is its creation's...
	is.Equal(journalRows, 2)   // ...and its steps are in its journal

	got, err := s.GetRun(ctx, crashedRunID)
	is.NoErr(err)
	is.Equal(got.TraceCount, 1)
	is.Equal(got.CurrentStep, "again")
	_, inFlight := got.Checkpoint.Calls["c2"]
	is.True(inFlight) // the last step's checkpoint: its call in flight
	trace, err := s.ReadTrace(ctx, crashedRunID, 0, 0)
	is.NoErr(err)
	is.Equal(trace, []workflow.TraceEntry{stepEntry("count", "again")})
	kinds := func() []string {
		events, last, err := s.ReadRunEvents(ctx, crashedRunID, 0, 0)
		is.NoErr(err)
		is.Equal(last, events[len(events)-1].Seq)
		var kinds []string
		for _, e := range events {
			kinds = append(kinds, e.Kind)
		}
		return kinds
	}
	is.Equal(kinds(), []string{store.RunEventStatusChanged, store.RunEventStepStarted, store.RunEventStepFinished, store.RunEventStepStarted})

	recovered, err := s.RecoverRunning(ctx, time.Now())
	is.NoErr(err)
	is.Equal(len(recovered), 1)
	is.Equal(recovered[0].TraceCount, 1)
	is.True(strings.Contains(*recovered[0].Error, `step "again"`)) // the step in flight when it died
	got, err = s.GetRun(ctx, crashedRunID)
	is.NoErr(err)
	is.Equal(got, recovered[0])
	is.NoErr(s.read.QueryRowContext(ctx, `SELECT trace_count, (SELECT COUNT(*) FROM run_journal) FROM runs WHERE id = ?`, crashedRunID).Scan(&rowTraceCount, &journalRows))
	is.Equal(rowTraceCount, 1) // the recovery folded the journal into the run's row
	is.Equal(journalRows, 0)
	trace, err = s.ReadTrace(ctx, crashedRunID, 0, 0)
	is.NoErr(err)
	is.Equal(len(trace), 1)
	is.Equal(kinds(), []string{store.RunEventStatusChanged, store.RunEventStepStarted, store.RunEventStepFinished, store.RunEventStepStarted, store.RunEventStatusChanged})
}

// TestALongRunsJournalIsFoldedAsItGrows commits more steps of a running
// run than its journal holds: the journal is folded into the run's row
// and tables when full, and every read sees the steps in order.
func TestALongRunsJournalIsFoldedAsItGrows(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	s, r := openWithRun(t)
	const steps = 2*maxJournalRows + 5
	var want []workflow.TraceEntry
	for i := range steps {
		e := stepEntry("count", "count")
		e.Attempts = i + 1
		want = append(want, e)
		r.TraceCount++
		is.NoErr(s.RecordProgress(ctx, r, []workflow.TraceEntry{e}))
	}
	var rowTraceCount, journalRows int
	is.NoErr(s.read.QueryRowContext(ctx, `SELECT trace_count, (SELECT COUNT(*) FROM run_journal) FROM runs WHERE id = ?`, r.ID).Scan(&rowTraceCount, &journalRows))
	is.Equal(rowTraceCount, 2*maxJournalRows+2) // folded twice, at the step past each full journal
	is.Equal(journalRows, 3)                    // the steps since
	trace, err := s.ReadTrace(ctx, r.ID, 0, 0)
	is.NoErr(err)
	is.Equal(trace, want)
	trace, err = s.ReadTrace(ctx, r.ID, 2*maxJournalRows, 3) // across the row's last entry and the journal
	is.NoErr(err)
	is.Equal(trace, want[2*maxJournalRows:2*maxJournalRows+3])
	events, last, err := s.ReadRunEvents(ctx, r.ID, 2*maxJournalRows+1, 4) // across the tables and the journal
	is.NoErr(err)
	is.Equal(last, int64(steps+1)) // the creation's status event, and a step_finished a step
	is.Equal(len(events), 4)
	for i, e := range events {
		is.Equal(e.Seq, int64(2*maxJournalRows+2+i))
		is.Equal(e.Step.Attempts, 2*maxJournalRows+1+i) // step seq-1's, in order
	}
	got, err := s.GetRun(ctx, r.ID)
	is.NoErr(err)
	is.Equal(got.TraceCount, steps)
}
