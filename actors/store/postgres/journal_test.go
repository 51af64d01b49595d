package postgres_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
	"github.com/mcpflow/mcpflow/actors/store/storetest"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// rowVersion is the version of run id's row: its xmin (the transaction
// that wrote it) and its ctid (where it is). An update of the row, in
// place (HOT) or not, changes both; a row lock (SELECT ... FOR UPDATE)
// neither.
func rowVersion(t *testing.T, dsn, id string) string {
	t.Helper()
	versions := query[string](t, dsn, `SELECT xmin::text || ' ' || ctid::text FROM runs WHERE id = '`+id+`'`)
	is.New(t).Equal(len(versions), 1) // the run exists
	return versions[0]
}

// rows counts the rows of table.
func rows(t *testing.T, dsn, table string) int {
	t.Helper()
	return query[int](t, dsn, `SELECT count(*)::int FROM `+table)[0]
}

// runReads is what the reads of a run give: its record, its place in
// the list of runs, its trace and its events.
type runReads struct {
	run    store.Run
	listed store.Run // the first run ListRuns gives
	trace  []workflow.TraceEntry
	events []store.RunEvent
}

// readRun reads run id from s, each way, and checks that its events are
// numbered from 1 with no gap, the last as ReadRunEvents says.
func readRun(t *testing.T, s store.Store, id string) runReads {
	t.Helper()
	is := is.New(t)
	ctx := t.Context()
	var r runReads
	var err error
	r.run, err = s.GetRun(ctx, id)
	is.NoErr(err)
	list, _, err := s.ListRuns(ctx, store.RunQuery{Limit: 1})
	is.NoErr(err)
	is.Equal(len(list), 1)
	r.listed = list[0]
	r.trace, err = s.ReadTrace(ctx, id, 0, 0)
	is.NoErr(err)
	var last int64
	r.events, last, err = s.ReadRunEvents(ctx, id, 0, 0)
	is.NoErr(err)
	for i, e := range r.events {
		is.Equal(e.Seq, int64(i+1)) // in order, no gap
	}
	is.Equal(last, int64(len(r.events))) // the last is the last read
	return r
}

// testAStepCommitIsAJournalRow commits steps of a running run, with a
// live event between two of them: each step is one row of the run's
// journal, which leaves the run's row as its creation wrote it and
// run_trace and run_events as they were, and every read folds them, from
// this store and from one opened again. The run's end folds the journal
// into its row and tables.
func testAStepCommitIsAJournalRow(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	dsn := srv.NewDatabase(t)
	s, err := postgres.Open(ctx, dsn)
	is.NoErr(err)
	r := clusterRun("run", store.RunRunning)
	is.NoErr(s.CreateRun(ctx, r, nil))
	version := rowVersion(t, dsn, "run")
	const steps = 5
	var want []workflow.TraceEntry
	for i := range steps {
		var entries []workflow.TraceEntry
		r, entries = step(r, store.RunRunning)
		is.NoErr(s.RecordProgress(ctx, r, entries))
		want = append(want, entries...)
		is.Equal(rowVersion(t, dsn, "run"), version) // the step did not rewrite the run's row
		if i == 2 {                                  // the live event moves the row's last event, as before the journal
			is.NoErr(s.AppendRunEvents(ctx, "run", []store.RunEvent{{Kind: store.RunEventStepLog,
				Step: &store.RunEventStep{FrameID: "root", NodeID: "step-3"}, Log: &store.RunEventMessage{Level: "info"}}}))
			version = rowVersion(t, dsn, "run")
		}
	}
	is.Equal(rows(t, dsn, "run_journal"), steps) // one journal row a step
	is.Equal(rows(t, dsn, "run_trace"), 0)       // and nothing else
	is.Equal(rows(t, dsn, "run_events"), 2)      // the creation's status event and the live event

	reads := readRun(t, s, "run")
	is.Equal(reads.run, r) // the last step's record
	is.Equal(reads.listed, r)
	is.Equal(reads.trace, want)
	is.Equal(len(reads.events), 1+steps+1) // the creation's, one a step, the live one
	is.Equal(reads.events[4].Kind, store.RunEventStepLog)
	is.NoErr(s.Close())

	s = open(t, dsn) // a store opened again reads the same
	is.Equal(readRun(t, s, "run"), reads)

	end, entries := step(r, store.RunCompleted)
	is.NoErr(s.RecordProgress(ctx, end, entries))
	is.True(rowVersion(t, dsn, "run") != version) // the end writes the row
	is.Equal(rows(t, dsn, "run_journal"), 0)      // and folds the journal
	is.Equal(rows(t, dsn, "run_trace"), steps+1)
	ended := readRun(t, s, "run")
	is.Equal(ended.run, end)
	is.Equal(ended.trace, append(want, entries...))
	is.Equal(ended.events[:len(reads.events)], reads.events) // the events it had, then the end's
	is.Equal(ended.events[len(ended.events)-1].Kind, store.RunEventStatusChanged)
}

// testALongRunsJournalIsFolded commits more steps of a running run than
// its journal holds: the step past a full journal folds it, and every
// read, across the tables and the journal, sees the steps in order.
func testALongRunsJournalIsFolded(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	dsn := srv.NewDatabase(t)
	s := open(t, dsn)
	r := clusterRun("run", store.RunRunning)
	is.NoErr(s.CreateRun(ctx, r, nil))
	const steps = 2*postgres.MaxJournalRows + 5
	var want []workflow.TraceEntry
	for range steps {
		var entries []workflow.TraceEntry
		r, entries = step(r, store.RunRunning)
		is.NoErr(s.RecordProgress(ctx, r, entries))
		want = append(want, entries...)
	}
	folded := 2*postgres.MaxJournalRows + 2 // the steps up to the one past each full journal
	is.Equal(query[int](t, dsn, `SELECT trace_count FROM runs`), []int{folded})
	is.Equal(rows(t, dsn, "run_trace"), folded)
	is.Equal(rows(t, dsn, "run_journal"), steps-folded) // the steps since

	reads := readRun(t, s, "run")
	is.Equal(reads.run, r)
	is.Equal(reads.trace, want)
	is.Equal(len(reads.events), steps+1)               // the creation's, then a step_finished a step
	trace, err := s.ReadTrace(ctx, "run", folded-1, 3) // across the tables and the journal
	is.NoErr(err)
	is.Equal(trace, want[folded-1:folded+2])
	events, last, err := s.ReadRunEvents(ctx, "run", int64(folded-1), 4)
	is.NoErr(err)
	is.Equal(last, int64(steps+1))
	is.Equal(events, reads.events[folded-1:folded+3])
}

// behindALock holds run id's row locked from a transaction of its own,
// starts first, then second once first waits for the row, then lets them
// go once second waits too: first takes the row and commits before
// second does, whose statement began before first committed.
func behindALock(t *testing.T, dsn, id string, first, second func() error) (error, error) {
	t.Helper()
	is := is.New(t)
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dsn)
	is.NoErr(err)
	defer conn.Close(context.WithoutCancel(ctx))
	tx, err := conn.Begin(ctx)
	is.NoErr(err)
	_, err = tx.Exec(ctx, `SELECT FROM runs WHERE id = $1 FOR UPDATE`, id)
	is.NoErr(err)
	// Another connection watches: one in a transaction reads the same
	// pg_stat_activity until it ends.
	watch, err := pgx.Connect(ctx, dsn)
	is.NoErr(err)
	defer watch.Close(context.WithoutCancel(ctx))
	waiting := func(n int) {
		poll.For(t, "commits waiting for the run's row", 10*time.Second, func() bool {
			var waiters int
			err := watch.QueryRow(ctx, `SELECT count(*)::int FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiters)
			return err == nil && waiters == n
		})
	}
	errs := [2]chan error{make(chan error, 1), make(chan error, 1)}
	for i, fn := range []func() error{first, second} {
		go func() { errs[i] <- fn() }()
		waiting(i + 1)
	}
	is.NoErr(tx.Commit(ctx))
	return <-errs[0], <-errs[1]
}

// testACommitReadsTheJournalAfterTheLock has a run's step commit, a
// claim of its runs by another node, and that node's recovery each wait
// for the run's row while a step commit ahead of them journals a step:
// each reads that step, which committed after its statement began.
func testACommitReadsTheJournalAfterTheLock(t *testing.T, srv *pgtest.Server) {
	ctx := t.Context()
	for _, tt := range []struct {
		name string
		// next reads run r, which the step ahead of it made, through
		// store s of node a, and b's; it returns r as it read it.
		next func(t *testing.T, a, b *postgres.Store, r store.Run) (store.Run, error)
	}{
		{"step", func(t *testing.T, a, _ *postgres.Store, r store.Run) (store.Run, error) {
			r, entries := step(r, store.RunRunning)
			return r, a.RecordProgress(ctx, r, entries) // its head is the step's ahead, or it conflicts
		}},
		{"claim", func(t *testing.T, _, b *postgres.Store, _ store.Run) (store.Run, error) {
			claimed, err := b.ClaimRuns(ctx, "a")
			if err != nil || len(claimed) != 1 {
				return store.Run{}, errors.Join(err, errors.New("not one run claimed"))
			}
			return claimed[0], nil
		}},
		{"recovery", func(t *testing.T, a, _ *postgres.Store, _ store.Run) (store.Run, error) {
			recovered, err := a.RecoverRunning(ctx, clusterStart.Add(time.Hour))
			if err != nil || len(recovered) != 1 {
				return store.Run{}, errors.Join(err, errors.New("not one run recovered"))
			}
			return recovered[0], nil
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			dsn := srv.NewDatabase(t)
			a, b := open(t, dsn, postgres.WithNode("a")), open(t, dsn, postgres.WithNode("b"))
			r := clusterRun("run", store.RunRunning)
			is.NoErr(a.CreateRun(ctx, r, nil))
			ahead, entries := step(r, store.RunRunning)
			var got store.Run
			errAhead, err := behindALock(t, dsn, "run",
				func() error { return a.RecordProgress(ctx, ahead, entries) },
				func() (err error) { got, err = tt.next(t, a, b, ahead); return err })
			is.NoErr(errAhead)
			is.NoErr(err)
			is.True(got.TraceCount > r.TraceCount) // the step ahead is in what it read
			is.Equal(readRun(t, a, "run").run, got)
		})
	}
}

// testAFencedNodeAppendsNoJournalRow has node b claim a run that node a
// journaled steps of: b reads them, a's next step and live events are
// fenced off and leave the journal as it was, and b's steps go on after
// a's.
func testAFencedNodeAppendsNoJournalRow(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	dsn := srv.NewDatabase(t)
	a, b := open(t, dsn, postgres.WithNode("a")), open(t, dsn, postgres.WithNode("b"))
	r := clusterRun("run", store.RunRunning)
	is.NoErr(a.CreateRun(ctx, r, nil))
	for range 2 {
		var entries []workflow.TraceEntry
		r, entries = step(r, store.RunRunning)
		is.NoErr(a.RecordProgress(ctx, r, entries))
	}
	claimed, err := b.ClaimRuns(ctx, "a")
	is.NoErr(err)
	is.Equal(claimed, []store.Run{r}) // as a's journal left it

	late, entries := step(r, store.RunRunning)
	is.True(errors.Is(a.RecordProgress(ctx, late, entries), store.ErrFenced))
	err = a.AppendRunEvents(ctx, "run", []store.RunEvent{{Kind: store.RunEventStepLog,
		Step: &store.RunEventStep{FrameID: "root", NodeID: "step-3"}, Log: &store.RunEventMessage{Level: "info"}}})
	is.True(errors.Is(err, store.ErrFenced))
	is.Equal(rows(t, dsn, "run_journal"), 2) // a's two steps, no more

	r, entries = step(r, store.RunRunning)
	is.NoErr(b.RecordProgress(ctx, r, entries)) // the same step, b's
	is.Equal(rows(t, dsn, "run_journal"), 3)
	reads := readRun(t, b, "run")
	is.Equal(reads.run, r)
	is.Equal(len(reads.trace), 3)
	is.Equal(reads.trace[2].NodeID, "step-3")
}

// crashDSNEnv names, in the process that
// TestAProcessEndedAfterJournaledStepsLosesNothing starts, the database
// it journals steps in before it exits at once.
const crashDSNEnv = "MCPFLOW_TEST_PG_JOURNAL_CRASH_DSN"

// crashedRun is the run that process makes: created, then two steps, the
// second with a call in flight.
func crashedRun() (runs []store.Run, entries [][]workflow.TraceEntry) {
	r := clusterRun("run", store.RunRunning)
	runs, entries = append(runs, r), append(entries, nil)
	for range 2 {
		var e []workflow.TraceEntry
		r, e = step(r, store.RunRunning)
		r.Checkpoint = &workflow.Snapshot{Calls: map[string]workflow.Call{"c" + e[0].NodeID: {ID: "c" + e[0].NodeID, NodeID: e[0].NodeID}}}
		runs, entries = append(runs, r), append(entries, e)
	}
	return runs, entries
}

// journalThenExit makes crashedRun in the database dsn, as node a, and
// ends the process at once once its steps are acknowledged: only the
// run's journal holds them, and the store is never closed.
func journalThenExit(t *testing.T, dsn string) {
	ctx := context.Background()
	s, err := postgres.Open(ctx, dsn, postgres.WithNode("a"))
	if err != nil {
		t.Fatal(err)
	}
	runs, entries := crashedRun()
	if err := s.CreateRun(ctx, runs[0], nil); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(runs); i++ {
		if err := s.RecordProgress(ctx, runs[i], entries[i]); err != nil {
			t.Fatal(err)
		}
	}
	os.Exit(storetest.ChildExit) // no Close: the process ends with the steps in the journal alone
}

// TestAProcessEndedAfterJournaledStepsLosesNothing ends a process right
// after two step commits that only its run's journal holds (its row is
// still its creation's), and opens the store again as the same node:
// every read sees the steps, and the recovery that a restart makes folds
// them into the run.
func TestAProcessEndedAfterJournaledStepsLosesNothing(t *testing.T) {
	if dsn := os.Getenv(crashDSNEnv); dsn != "" {
		journalThenExit(t, dsn)
		return
	}
	is := is.New(t)
	ctx := t.Context()
	dsn := pgtest.Start(t).NewDatabase(t)
	storetest.EndInChild(t, crashDSNEnv, dsn)

	runs, entries := crashedRun()
	s := open(t, dsn, postgres.WithNode("a"))
	is.Equal(query[int](t, dsn, `SELECT trace_count FROM runs`), []int{0}) // the run's row is its creation's
	is.Equal(rows(t, dsn, "run_journal"), 2)                               // its steps are in its journal
	reads := readRun(t, s, "run")
	is.Equal(reads.run, runs[2]) // the last step's checkpoint, its call in flight
	is.Equal(reads.trace, append(entries[1], entries[2]...))
	is.Equal(len(reads.events), 5) // status; the first step's start; its end and the second's start

	recovered, err := s.RecoverRunning(ctx, clusterStart.Add(time.Hour))
	is.NoErr(err)
	is.Equal(len(recovered), 1)
	is.Equal(recovered[0].TraceCount, 2)
	is.True(strings.Contains(*recovered[0].Error, `step "fetch"`)) // the step in flight when it died
	is.Equal(rows(t, dsn, "run_journal"), 0)                       // the recovery folded the journal
	is.Equal(query[int](t, dsn, `SELECT trace_count FROM runs`), []int{2})
	after := readRun(t, s, "run")
	is.Equal(after.run, recovered[0])
	is.Equal(after.trace, reads.trace)
	is.Equal(after.events[:len(reads.events)], reads.events)
	is.Equal(after.events[len(after.events)-1].Kind, store.RunEventStatusChanged)
}
