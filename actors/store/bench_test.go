package store_test

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/actors/store/sqlite/sqlitetest"
	"github.com/mcpflow/mcpflow/actors/store/storetest"
)

// BenchmarkRunLifecycle measures what the run actor asks of a store for a
// two-step run: CreateRun, RecordProgress twice with one trace entry each,
// and GetRun.
func BenchmarkRunLifecycle(b *testing.B) {
	b.Run("memory", func(b *testing.B) {
		benchmarkRunLifecycle(b, closeAtEnd(b, store.NewMemory()))
	})
	b.Run("sqlite", func(b *testing.B) {
		benchmarkRunLifecycle(b, openSQLite(b, sqlite.SyncFull))
	})
}

// BenchmarkRunLifecycleParallel runs the lifecycle of BenchmarkRunLifecycle
// from 1, 8 and 32 goroutines at once, as concurrent runs do, on the SQLite
// store at each sync level. ns/op is wall time per run (the inverse of
// runs/s); commits/run is how many transactions the store committed per
// run.
func BenchmarkRunLifecycleParallel(b *testing.B) {
	for _, level := range []sqlite.Sync{sqlite.SyncFull, sqlite.SyncNormal} {
		for _, runs := range []int{1, 8, 32} {
			b.Run(fmt.Sprintf("sync=%s/runs=%d", level, runs), func(b *testing.B) {
				s := openSQLite(b, level)
				ctx := b.Context()
				var next atomic.Int64
				before := s.WriteStats()
				b.ReportAllocs()
				b.ResetTimer()
				var wg sync.WaitGroup
				for range runs {
					wg.Go(func() {
						for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
							if err := storetest.RunLifecycle(ctx, s, "run-"+strconv.Itoa(int(i))); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				after := s.WriteStats()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
				b.ReportMetric(float64(after.Commits-before.Commits)/float64(b.N), "commits/run")
			})
		}
	}
}

// openSQLite opens a SQLite store at sync level in a temporary directory,
// to be closed when b ends.
func openSQLite(b *testing.B, level sqlite.Sync) *sqlite.Store {
	return sqlitetest.Open(b, sqlite.WithSync(level))
}

// closeAtEnd closes s when b ends.
func closeAtEnd[S store.Store](b *testing.B, s S) S {
	b.Cleanup(func() {
		if err := s.Close(); err != nil {
			b.Error(err)
		}
	})
	return s
}

func benchmarkRunLifecycle(b *testing.B, s store.Store) {
	ctx := b.Context()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := storetest.RunLifecycle(ctx, s, "run-"+strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
	}
}
