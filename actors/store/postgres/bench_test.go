package postgres_test

import (
	"context"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
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
						if err := runLifecycle(b.Context(), s, "run-"+strconv.FormatInt(ids.Add(1), 10)); err != nil {
							b.Fatal(err)
						}
					}
					return
				}
				b.SetParallelism(4)
				b.ResetTimer() // b.Loop does it for the serial runs
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := runLifecycle(b.Context(), s, "run-"+strconv.FormatInt(ids.Add(1), 10)); err != nil {
							b.Error(err) // not Fatal: this is not the benchmark's goroutine
							return
						}
					}
				})
			})
		}
	}
}

// lifecycleStart is the clock of the benchmark's runs.
var lifecycleStart = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// lifecycleSteps are the two steps of each run.
var lifecycleSteps = []workflow.TraceEntry{
	{FrameID: "root", NodeID: "fetch", StepType: workflow.NodeCall, Outcome: workflow.OutcomeOK, NextNodeID: "parse",
		ResolvedInput: workflow.Object{"url": "https://example.com"}, Output: workflow.Object{"status": 200.0}},
	{FrameID: "root", NodeID: "parse", StepType: workflow.NodeCall, Outcome: workflow.OutcomeOK, NextNodeID: workflow.End,
		ResolvedInput: workflow.Object{"body": "<html></html>"}, Output: workflow.Object{"title": "Example"}},
}

// runLifecycle creates a run, records its two steps and reads it back.
func runLifecycle(ctx context.Context, s store.Store, id string) error {
	r := store.Run{
		ID: id, DeploymentID: "dep", ArtifactID: "wf", ArtifactVersion: 1,
		Status: store.RunRunning, CurrentStep: "fetch", Input: workflow.Object{"url": "https://example.com"},
		CreatedAt: lifecycleStart, UpdatedAt: lifecycleStart,
	}
	if err := s.CreateRun(ctx, r, nil); err != nil {
		return err
	}
	for _, step := range lifecycleSteps {
		r.TraceCount++
		r.CurrentStep = step.NextNodeID
		r.UpdatedAt = r.UpdatedAt.Add(time.Second)
		if err := s.RecordProgress(ctx, r, []workflow.TraceEntry{step}); err != nil {
			return err
		}
	}
	_, err := s.GetRun(ctx, r.ID)
	return err
}
