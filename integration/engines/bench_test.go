package engines_test

import (
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/actors/store/sqlite/sqlitetest"
	"github.com/mcpflow/mcpflow/integration/engines"
)

// The engines under the SQLite store: modernc's (mcpflow's) and mattn's
// cgo build.
var sqliteEngines = []struct{ name, driver string }{{"modernc", "modernc"}, {"cgo", engines.CgoDriver}}

// syncLevel is a sync level of the SQLite store and whether a Pebble
// append syncs at it.
type syncLevel struct {
	sqlite sqlite.Sync
	pebble bool
}

// The sync levels.
var levels = []syncLevel{{sqlite.SyncFull, true}, {sqlite.SyncNormal, false}}

// BenchmarkWarmRunCommits measures the commits of a warm one-step run
// (engines.WarmRun: its creation, its step, its end, which folds its
// journal), one after the other as its run actor makes them, through the
// SQLite store on each engine at each sync level. cpu-ns/op is the
// process's CPU time per run, the store's writer's included.
func BenchmarkWarmRunCommits(b *testing.B) {
	w := warmRun(b)
	for _, level := range levels {
		for _, engine := range sqliteEngines {
			b.Run(fmt.Sprintf("sync=%s/engine=%s", level.sqlite, engine.name), func(b *testing.B) {
				s, ctx := openStore(b, engine.driver, level), b.Context()
				measure(b, func(i int) error { return w.Replay(ctx, s, runID(i)) })
			})
		}
	}
}

// BenchmarkStepCommit measures the journal append alone: the step commit
// of a warm run (engines.Workload.Step), each op that of a run of its own
// created before the timer starts, through the SQLite store on each
// engine (one run_journal row, through the store's writer), and as a row
// of a Pebble journal (engines.PebbleJournal: encoded as the store
// encodes it, one batch, synced at sync full).
func BenchmarkStepCommit(b *testing.B) {
	w := warmRun(b)
	step := w.Step()
	for _, level := range levels {
		for _, engine := range sqliteEngines {
			b.Run(fmt.Sprintf("sync=%s/engine=%s", level.sqlite, engine.name), func(b *testing.B) {
				s, ctx := openStore(b, engine.driver, level), b.Context()
				createRuns(b, func(i int) error { return engines.Commit(ctx, s, engines.As(w[0], runID(i))) })
				measure(b, func(i int) error { return engines.Commit(ctx, s, engines.As(step, runID(i))) })
			})
		}
		b.Run(fmt.Sprintf("sync=%s/engine=pebble", level.sqlite), func(b *testing.B) {
			j := openPebble(b, level.pebble)
			measure(b, func(i int) error { return j.Append(engines.As(step, runID(i)), 1) })
		})
	}
}

// measure runs op b.N times, with i from 0, and reports allocations and
// the process's CPU time per op (cpu-ns/op).
func measure(b *testing.B, op func(i int) error) {
	b.Helper()
	b.ReportAllocs()
	before, err := engines.ProcessCPU()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		if err := op(i); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	after, err := engines.ProcessCPU()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(after-before)/float64(b.N), "cpu-ns/op")
}

// createRuns runs create for i from 0 to b.N-1, from 8 goroutines (so
// the store commits them in batches), before the benchmark's timer.
func createRuns(b *testing.B, create func(i int) error) {
	b.Helper()
	var (
		wg   sync.WaitGroup
		next = make(chan int)
	)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				if err := create(i); err != nil {
					b.Error(err)
				}
			}
		})
	}
	for i := range b.N {
		next <- i
	}
	close(next)
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
}

// openStore opens a SQLite store through driverName at level in b's
// temporary directory, closed when b ends.
func openStore(b *testing.B, driverName string, level syncLevel) *sqlite.Store {
	b.Helper()
	return sqlitetest.Open(b, append(driverOption(driverName), sqlite.WithSync(level.sqlite))...)
}

// openPebble opens a Pebble journal in b's temporary directory, closed
// when b ends.
func openPebble(b *testing.B, sync bool) *engines.PebbleJournal {
	b.Helper()
	j, err := engines.OpenPebble(b.TempDir(), sync)
	return closedAtEnd(b, j, err)
}

// closedAtEnd is v, which opening it returned with err, closed when b
// ends; it fails b if either fails.
func closedAtEnd[T interface{ Close() error }](b *testing.B, v T, err error) T {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := v.Close(); err != nil {
			b.Error(err)
		}
	})
	return v
}

// runID is the id of the benchmark's run i.
func runID(i int) string { return "run-" + strconv.Itoa(i) }

// warmRun is engines.WarmRun, failing b if it does not read.
func warmRun(b *testing.B) engines.Workload {
	b.Helper()
	w, err := engines.WarmRun()
	if err != nil {
		b.Fatal(err)
	}
	return w
}
