package postgres_test

import (
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/actors/store/storetest"
)

// BenchmarkRunLifecycle measures, on SQLite and on PostgreSQL in one run,
// what the run actor asks of a store for a two-step run: CreateRun,
// RecordProgress twice with one trace entry each, and GetRun (the shape of
// actors/store's benchmark of the same name). "sqlite" and "postgres" are
// durable: an acknowledged commit is on disk (SQLite synchronous=FULL,
// PostgreSQL fsync and synchronous_commit on). "sqlite-normal" and
// "postgres-async" do not wait for the disk at commit (SQLite
// synchronous=NORMAL, PostgreSQL synchronous_commit=off), which leaves
// what each store costs besides the sync. "serial" runs one run at a
// time; "parallel" runs GOMAXPROCS*4 at once, as concurrent runs of a
// server do.
func BenchmarkRunLifecycle(b *testing.B) {
	srv := pgtest.Start(b, pgtest.Durable())
	openSQLite := func(opts ...sqlite.Option) func(b *testing.B) store.Store {
		return func(b *testing.B) store.Store {
			s, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"), opts...)
			if err != nil {
				b.Fatal(err)
			}
			return s
		}
	}
	openPostgres := func(params string) func(b *testing.B) store.Store {
		return func(b *testing.B) store.Store {
			s, err := postgres.Open(b.Context(), srv.NewDatabase(b)+params)
			if err != nil {
				b.Fatal(err)
			}
			return s
		}
	}
	stores := []struct {
		name string
		open func(b *testing.B) store.Store
	}{
		{"sqlite", openSQLite()},
		{"postgres", openPostgres("")},
		{"sqlite-normal", openSQLite(sqlite.WithSync(sqlite.SyncNormal))},
		{"postgres-async", openPostgres(" synchronous_commit=off")}, // a server setting, for this DSN's sessions
	}
	for _, mode := range []struct {
		name     string
		parallel bool
	}{{"serial", false}, {"parallel", true}} {
		for _, st := range stores {
			b.Run(mode.name+"/"+st.name, func(b *testing.B) {
				s := st.open(b)
				b.Cleanup(func() {
					if err := s.Close(); err != nil {
						b.Error(err)
					}
				})
				var ids atomic.Int64
				b.ReportAllocs()
				if !mode.parallel {
					for b.Loop() {
						if err := storetest.RunLifecycle(b.Context(), s, "run-"+strconv.FormatInt(ids.Add(1), 10)); err != nil {
							b.Fatal(err)
						}
					}
					return
				}
				b.SetParallelism(4)
				b.ResetTimer() // b.Loop does it for the serial runs
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := storetest.RunLifecycle(b.Context(), s, "run-"+strconv.FormatInt(ids.Add(1), 10)); err != nil {
							b.Error(err) // not Fatal: this is not the benchmark's goroutine
							return
						}
					}
				})
			})
		}
	}
}
