package postgres_test

import (
	"context"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/actors/store/storetest"
	"github.com/mcpflow/mcpflow/actors/workflow"
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

// BenchmarkRunStartFinish measures run starts and ends on a durable
// PostgreSQL (fsync and synchronous_commit on), GOMAXPROCS*8 goroutines
// at once: each operation creates a run and finishes it with one step,
// two commits that each append an admin event (workflow_run_started, then
// workflow_run_completed). "pool=4" is the pool's default size on this
// machine; "pool=16" gives each goroutine a connection. "disk" flushes
// the WAL to this machine's disk; "flush=4ms" makes every flush wait 4 ms
// more first (commit_delay, which concurrent commits share as they would
// share a slow disk's flush), as the development VM's disk took when the
// admin events' counter row capped such commits at about 225 a second.
// "flushes/run" counts the WAL flushes of the whole server (pg_stat_wal),
// which the machine's load does not blur as it does the time.
func BenchmarkRunStartFinish(b *testing.B) {
	srv := pgtest.Start(b, pgtest.Durable())
	for _, disk := range []struct{ name, params string }{
		{"disk", ""},
		{"flush=4ms", " commit_delay=4000 commit_siblings=0"}, // server settings for these sessions (superuser)
	} {
		for _, conns := range []int{4, 16} {
			b.Run(disk.name+"/pool="+strconv.Itoa(conns), func(b *testing.B) {
				dsn := srv.NewDatabase(b) + disk.params
				s, err := postgres.Open(b.Context(), dsn+" pool_max_conns="+strconv.Itoa(conns))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() {
					if err := s.Close(); err != nil { // closed already, unless the benchmark failed
						b.Error(err)
					}
				})
				flushed := walSyncs(b, dsn)
				var ids atomic.Int64
				b.ReportAllocs()
				b.SetParallelism(8)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := startFinish(b.Context(), s, "run-"+strconv.FormatInt(ids.Add(1), 10)); err != nil {
							b.Error(err) // not Fatal: this is not the benchmark's goroutine
							return
						}
					}
				})
				b.StopTimer()
				if err := s.Close(); err != nil { // its connections report their statistics as they end
					b.Fatal(err)
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
				b.ReportMetric(float64(walSyncs(b, dsn)-flushed)/float64(b.N), "flushes/run")
			})
		}
	}
}

// walSyncs is how many times the server has flushed its WAL to disk.
func walSyncs(b *testing.B, dsn string) int64 {
	b.Helper()
	conn, err := pgx.Connect(b.Context(), dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.WithoutCancel(b.Context()))
	var n int64
	if err := conn.QueryRow(b.Context(), `SELECT wal_sync FROM pg_stat_wal`).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}

// startFinish creates run id running and records it completed after one
// step.
func startFinish(ctx context.Context, s store.Store, id string) error {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := store.Run{
		ID: id, DeploymentID: "dep", ArtifactID: "wf", ArtifactVersion: 1,
		Status: store.RunRunning, CurrentStep: "fetch", CreatedAt: start, UpdatedAt: start,
	}
	if err := s.CreateRun(ctx, r, nil); err != nil {
		return err
	}
	outcome := "ok"
	r.Status, r.Outcome, r.CurrentStep, r.TraceCount, r.UpdatedAt = store.RunCompleted, &outcome, "", 1, start.Add(time.Second)
	return s.RecordProgress(ctx, r, []workflow.TraceEntry{{FrameID: "root", NodeID: "fetch", NextNodeID: workflow.End}})
}
