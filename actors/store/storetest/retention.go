package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// retention is the store retention of the retention tests.
const retention = 2 * time.Second

// ExpiredRuns is how many finished runs TestEveryExpiredRunIsGoneWithinAMinute
// (actors/retention) stores, on each kind of store.
const ExpiredRuns = 10_000

// prunedRuns is how many finished runs pruneEveryExpiredRun prunes: a
// hundred batches and more, on every store of the suite.
const prunedRuns = 2_000

// pruneLimit is the batch the retention tests prune in.
var pruneLimit = store.PruneLimit{Runs: 256, Rows: 4096}

// FinishedRun stores run id as one finished at end with one step: created,
// then completed; the store's retention runs from end.
func FinishedRun(ctx context.Context, s store.Store, id string, end time.Time) error {
	r := run(id, store.RunRunning, end)
	if err := s.CreateRun(ctx, r, nil); err != nil {
		return err
	}
	r.Status, r.TraceCount = store.RunCompleted, 1
	return s.RecordProgress(ctx, r, []workflow.TraceEntry{entry("fetch", workflow.End)})
}

// InterruptedRun stores run id as one that paused in an interrupt at at.
func InterruptedRun(ctx context.Context, s store.Store, id string, at time.Time) error {
	r := run(id, store.RunRunning, at)
	if err := s.CreateRun(ctx, r, nil); err != nil {
		return err
	}
	r.Status, r.TraceCount = store.RunInterrupted, 1
	r.Interrupt = &workflow.Interrupt{ID: "approve", NodeID: "approve"}
	return s.RecordProgress(ctx, r, []workflow.TraceEntry{entry("fetch", "approve")})
}

// pruneAll prunes until a batch prunes none, and returns how many runs it
// pruned.
func pruneAll(ctx context.Context, is *is.I, s store.Store, now time.Time) int {
	total := 0
	for {
		n, err := s.PruneRuns(ctx, now, pruneLimit)
		is.NoErr(err)
		if n == 0 {
			return total
		}
		total += n
	}
}

// isPruned checks that every read of run id says it was pruned.
func isPruned(ctx context.Context, is *is.I, s store.Store, id string) {
	is.Helper()
	_, err := s.GetRun(ctx, id)
	is.True(errors.Is(err, store.ErrPruned))   // inspect says pruned
	is.True(errors.Is(err, store.ErrNotFound)) // which is a not found
	_, err = s.ReadTrace(ctx, id, 0, 0)
	is.True(errors.Is(err, store.ErrPruned))
	_, _, err = s.ReadRunEvents(ctx, id, 0, 0)
	is.True(errors.Is(err, store.ErrPruned))
}

// testPruneRuns prunes the finished runs whose retention has passed, and
// keeps the rest: those not finished, those kept for ever or longer by
// their deployment, those whose time has not come.
func testPruneRuns(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	for _, status := range []string{store.RunCompleted, store.RunFailed, store.RunCancelled} {
		is.NoErr(s.CreateRun(ctx, run("old-"+status, status, t0), nil))
	}
	is.NoErr(s.CreateRun(ctx, run("running", store.RunRunning, t0), nil))
	is.NoErr(InterruptedRun(ctx, s, "interrupted", t0))
	is.NoErr(FinishedRun(ctx, s, "young", t0.Add(time.Second)))
	forever := run("forever", store.RunCompleted, t0)
	forever.Deployment.Retention = &store.Retention{FinishedSeconds: ptr[int64](0)}
	is.NoErr(s.CreateRun(ctx, forever, nil))
	longer := run("longer", store.RunCompleted, t0)
	longer.Deployment.Retention = &store.Retention{FinishedSeconds: ptr[int64](60)}
	is.NoErr(s.CreateRun(ctx, longer, nil))
	eventsBefore, err := s.LastEventSeq(ctx)
	is.NoErr(err)

	now := t0.Add(retention)
	is.Equal(pruneAll(ctx, is, s, now), 3) // the three finished at t0
	for _, status := range []string{store.RunCompleted, store.RunFailed, store.RunCancelled} {
		isPruned(ctx, is, s, "old-"+status)
	}
	runs, total, err := s.ListRuns(ctx, store.RunQuery{})
	is.NoErr(err)
	is.Equal(total, 5) // runs.list says nothing of the pruned runs
	ids := map[string]bool{}
	for _, r := range runs {
		ids[r.ID] = true
	}
	is.Equal(ids, map[string]bool{"running": true, "interrupted": true, "young": true, "forever": true, "longer": true})
	eventsAfter, err := s.LastEventSeq(ctx)
	is.NoErr(err)
	is.Equal(eventsAfter, eventsBefore) // nor do the events
	_, err = s.GetRun(ctx, "never-stored")
	is.True(errors.Is(err, store.ErrNotFound))
	is.True(!errors.Is(err, store.ErrPruned)) // an unknown run was not pruned

	is.Equal(pruneAll(ctx, is, s, t0.Add(time.Second+retention)), 1) // young's time comes
	isPruned(ctx, is, s, "young")
	is.Equal(pruneAll(ctx, is, s, t0.Add(time.Minute)), 1) // and longer's
	is.Equal(pruneAll(ctx, is, s, t0.Add(365*24*time.Hour)), 0)
	for _, id := range []string{"running", "interrupted", "forever"} {
		_, err := s.GetRun(ctx, id)
		is.NoErr(err) // kept: not finished, or kept for ever
	}

	// A run that ends later is kept from its end: the interrupted run,
	// cancelled a minute after it paused.
	r, err := s.GetRun(ctx, "interrupted")
	is.NoErr(err)
	r.Status, r.Interrupt, r.UpdatedAt = store.RunCancelled, nil, t0.Add(time.Minute)
	is.NoErr(s.RecordProgress(ctx, r, nil))
	is.Equal(pruneAll(ctx, is, s, t0.Add(time.Minute+retention-time.Millisecond)), 0)
	is.Equal(pruneAll(ctx, is, s, t0.Add(time.Minute+retention)), 1)
	isPruned(ctx, is, s, "interrupted")

	// Tombstones go after their own time: then the run is plain not found.
	dropped, err := s.DropTombstones(ctx, now.Add(time.Millisecond), 100)
	is.NoErr(err)
	is.Equal(dropped, 3) // those pruned at now
	_, err = s.GetRun(ctx, "old-completed")
	is.True(errors.Is(err, store.ErrNotFound))
	is.True(!errors.Is(err, store.ErrPruned))
	isPruned(ctx, is, s, "young") // pruned later: its tombstone is kept
	_, err = s.ReclaimSpace(ctx)
	is.NoErr(err)
	_, err = s.StoreSize(ctx)
	is.NoErr(err)
}

// testPruneLimits checks that one PruneRuns stays within its limit: so
// many runs, and so many rows past the first run.
func testPruneLimits(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	for i := range 5 {
		is.NoErr(FinishedRun(ctx, s, fmt.Sprintf("run-%d", i), t0.Add(time.Duration(i)*time.Millisecond)))
	}
	big := run("big", store.RunRunning, t0.Add(10*time.Millisecond))
	is.NoErr(s.CreateRun(ctx, big, nil))
	big.Status = store.RunCompleted
	progress(ctx, is, s, big, entry("a", "b"), entry("b", "c"), entry("c", "d"), entry("d", workflow.End))
	now := t0.Add(time.Hour)

	n, err := s.PruneRuns(ctx, now, store.PruneLimit{Runs: 2, Rows: 1000})
	is.NoErr(err)
	is.Equal(n, 2) // the runs bound
	isPruned(ctx, is, s, "run-0")
	isPruned(ctx, is, s, "run-1")
	n, err = s.PruneRuns(ctx, now, store.PruneLimit{Runs: 100, Rows: 2 * store.PruneCost(1)})
	is.NoErr(err)
	is.Equal(n, 2) // the rows bound: two runs of one step each
	isPruned(ctx, is, s, "run-3")
	n, err = s.PruneRuns(ctx, now, store.PruneLimit{Runs: 100, Rows: 1})
	is.NoErr(err)
	is.Equal(n, 1) // the first run goes whatever its size
	n, err = s.PruneRuns(ctx, now, store.PruneLimit{Runs: 100, Rows: 1})
	is.NoErr(err)
	is.Equal(n, 1) // big, alone
	isPruned(ctx, is, s, "big")
	n, err = s.PruneRuns(ctx, now, store.PruneLimit{Runs: 100, Rows: 1})
	is.NoErr(err)
	is.Equal(n, 0)
}

// pruneEveryExpiredRun stores prunedRuns finished runs and some
// interrupted ones, all of them past s's retention (which must be
// retention, 2 s) at now, prunes in bounded batches until nothing is
// left to prune, and checks that every finished run is gone and every
// interrupted one kept. It returns how long the pruning took.
func pruneEveryExpiredRun(t *testing.T, s store.Store) time.Duration {
	is := is.New(t)
	ctx := t.Context()
	const interrupted = 10
	is.NoErr(Concurrently(prunedRuns+interrupted, func(i int) error {
		if i < interrupted {
			return InterruptedRun(ctx, s, fmt.Sprintf("waiting-%d", i), t0)
		}
		return FinishedRun(ctx, s, fmt.Sprintf("run-%05d", i-interrupted), t0.Add(time.Duration(i)*time.Microsecond))
	}))

	start := time.Now()
	is.Equal(pruneAll(ctx, is, s, t0.Add(time.Hour)), prunedRuns)
	took := time.Since(start)
	runs, total, err := s.ListRuns(ctx, store.RunQuery{})
	is.NoErr(err)
	is.Equal(total, interrupted) // every expired run is gone; the interrupted ones are kept
	for _, r := range runs {
		is.Equal(r.Status, store.RunInterrupted)
	}
	isPruned(ctx, is, s, "run-00000")
	isPruned(ctx, is, s, fmt.Sprintf("run-%05d", prunedRuns-1))
	return took
}

// testPruneEveryExpiredRun runs pruneEveryExpiredRun.
func testPruneEveryExpiredRun(t *testing.T, s store.Store) {
	took := pruneEveryExpiredRun(t, s)
	t.Logf("pruned %d runs in %v", prunedRuns, took)
}

// Concurrently calls do(i) for i in [0, n) from 32 goroutines, so that
// a store's writes share commits, and returns the first error.
func Concurrently(n int, do func(i int) error) error {
	next := make(chan int)
	errs := make(chan error, 32)
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := do(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var err error
feed:
	for i := range n {
		select {
		case next <- i:
		case err = <-errs:
			break feed
		}
	}
	close(next)
	wg.Wait()
	close(errs)
	if err == nil {
		err = <-errs // nil once closed and empty
	}
	return err
}

// SteadyLoad is a steady load of runs on s, whose retention must be
// retention (2 s), on a clock of ticks: each tick of 100 ms, 20 runs
// finish, then the expired ones are pruned, the tombstones older than
// the retention dropped and the free space reclaimed, as the pruner
// would, one write at a time. It returns the store's size after each
// tick, as size measures it (nil: StoreSize). (The admin event log grows
// too, until it holds its bound: open s with a small one.) Without
// prune, nothing is pruned: the baseline.
func SteadyLoad(t *testing.T, s store.Store, ticks int, prune bool, size func() (int64, error)) []int64 {
	if size == nil {
		size = func() (int64, error) { return s.StoreSize(t.Context()) }
	}
	is := is.New(t)
	ctx := t.Context()
	const perTick, tick = 20, 100 * time.Millisecond
	sizes := make([]int64, 0, ticks)
	for i := range ticks {
		now := t0.Add(time.Duration(i) * tick)
		for j := range perTick {
			is.NoErr(FinishedRun(ctx, s, fmt.Sprintf("run-%d-%d", i, j), now))
		}
		if prune {
			pruneAll(ctx, is, s, now)
			_, err := s.DropTombstones(ctx, now.Add(-retention), 1000)
			is.NoErr(err)
			for more := true; more; {
				var err error
				more, err = s.ReclaimSpace(ctx)
				is.NoErr(err)
			}
		}
		n, err := size()
		is.NoErr(err)
		sizes = append(sizes, n)
	}
	_, total, err := s.ListRuns(ctx, store.RunQuery{})
	is.NoErr(err)
	if prune {
		is.True(total <= perTick*int(retention/tick+1)) // only the runs of the last 2 s are kept
	}
	return sizes
}

// ExpiresAfterMigration checks a store migrated from a schema before
// retention, which held run "done", finished at end, and run "waiting",
// interrupted: "done" expires keep after end, to the millisecond, and
// "waiting" never.
func ExpiresAfterMigration(t *testing.T, s store.Store, end time.Time, keep time.Duration) {
	is := is.New(t)
	is.Helper()
	ctx := t.Context()
	limit := store.PruneLimit{Runs: 10, Rows: 100}
	n, err := s.PruneRuns(ctx, end.Add(keep-time.Millisecond), limit)
	is.NoErr(err)
	is.Equal(n, 0) // not yet
	n, err = s.PruneRuns(ctx, end.Add(keep), limit)
	is.NoErr(err)
	is.Equal(n, 1) // keep after its end
	_, err = s.GetRun(ctx, "done")
	is.True(errors.Is(err, store.ErrPruned))
	_, err = s.GetRun(ctx, "waiting")
	is.NoErr(err) // kept
}

// testTransientRuns: a run whose own deployment says it is transient (a
// pass-through call of a connection exposed with record false) appends
// no admin event as it starts and ends, and is pruned once
// TransientGrace has passed since its end, whatever the store's
// retention (here the default, 30 days).
func testTransientRuns(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	before, err := s.LastEventSeq(ctx)
	is.NoErr(err)
	r := run("transient", store.RunRunning, t0)
	r.Deployment.Retention = &store.Retention{Transient: true}
	is.NoErr(s.CreateRun(ctx, r, nil))
	r.Status, r.TraceCount = store.RunCompleted, 1
	is.NoErr(s.RecordProgress(ctx, r, []workflow.TraceEntry{entry("fetch", workflow.End)}))
	after, err := s.LastEventSeq(ctx)
	is.NoErr(err)
	is.Equal(after, before) // no run_started, no run_completed
	got, err := s.GetRun(ctx, "transient")
	is.NoErr(err)
	is.Equal(got.Status, store.RunCompleted) // its caller reads its result

	is.Equal(pruneAll(ctx, is, s, t0.Add(store.TransientGrace-time.Second)), 0)
	is.Equal(pruneAll(ctx, is, s, t0.Add(store.TransientGrace)), 1)
	isPruned(ctx, is, s, "transient")
}
