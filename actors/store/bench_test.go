package store_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/actors/store/sqlite/sqlitetest"
	"github.com/mcpflow/mcpflow/actors/store/storetest"
	"github.com/mcpflow/mcpflow/actors/workflow"
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
// to be closed when tb ends.
func openSQLite(tb testing.TB, level sqlite.Sync) *sqlite.Store {
	return sqlitetest.Open(tb, sqlite.WithSync(level))
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

// BenchmarkCommit measures the commits of a run on the SQLite store as
// the run actor makes them, and reports store-B/op, the bytes handed to
// SQLite (sqlite.Store.BytesWritten) per run:
//
//   - result=1MiB: commitLargeResult of a 1 MiB text;
//   - pure=1000: commitPureSteps of 1,000 steps, 100 a commit, with no
//     input and state, and with a document of 64 KiB in both.
func BenchmarkCommit(b *testing.B) {
	b.Run("result=1MiB", func(b *testing.B) {
		s := openSQLite(b, sqlite.SyncNormal)
		text := strings.Repeat("x", 1<<20)
		benchmarkCommits(b, s, func(ctx context.Context, id string) error {
			return commitLargeResult(ctx, s, id, text)
		})
	})
	for _, doc := range []string{"", strings.Repeat("d", 64<<10)} {
		b.Run(fmt.Sprintf("pure=1000/state=%dKiB", len(doc)>>10), func(b *testing.B) {
			s := openSQLite(b, sqlite.SyncNormal)
			benchmarkCommits(b, s, func(ctx context.Context, id string) error {
				return commitPureSteps(ctx, s, id, doc, 10, 100)
			})
		})
	}
}

// commitLargeResult commits run id as the run actor does a run created
// with text as its input, whose one step's result is text: in the trace
// entry's resolved input, output and state changes, and the record's
// state, checkpoint and output.
func commitLargeResult(ctx context.Context, s store.Store, id, text string) error {
	r := benchRun(id, workflow.Object{"message": text})
	if err := s.CreateRun(ctx, r, nil); err != nil {
		return err
	}
	r.Status, r.Outcome, r.Output = store.RunCompleted, ptr("ok"), workflow.Object{"message": text}
	r.State = map[string]any{"message": text}
	r.Checkpoint.Scopes["root"].State = workflow.Object{"message": text}
	r.TraceCount = 1
	return s.RecordProgress(ctx, r, []workflow.TraceEntry{{
		FrameID: "root", NodeID: "call", StepType: workflow.NodeCall, Outcome: workflow.OutcomeOK, NextNodeID: workflow.End,
		ResolvedInput: workflow.Object{"message": text}, Output: workflow.Object{"message": text},
		StateChanges: workflow.Object{"state.message": text},
	}})
}

// pureStep is the trace entry of a `when` step that routes to itself.
var pureStep = workflow.TraceEntry{FrameID: "root", NodeID: "d", StepType: "condition", Outcome: "false", NextNodeID: "d",
	ResolvedInput: workflow.Object{}, Output: workflow.Object{"predicate": false}, StateChanges: workflow.Object{}}

// commitPureSteps creates run id and commits commits slices of perCommit
// pure steps; a doc other than "" is in the run's input and its state
// (so in its record twice, and in its checkpoint twice).
func commitPureSteps(ctx context.Context, s store.Store, id, doc string, commits, perCommit int) error {
	r := benchRun(id, workflow.Object{})
	if doc != "" {
		r = benchRun(id, workflow.Object{"doc": doc})
		r.State = map[string]any{"doc": doc}
		r.Checkpoint.Scopes["root"].State = workflow.Object{"doc": doc}
	}
	if err := s.CreateRun(ctx, r, nil); err != nil {
		return err
	}
	slice := slices.Repeat([]workflow.TraceEntry{pureStep}, perCommit)
	for range commits {
		r.TraceCount += len(slice)
		r.Checkpoint.Steps = r.TraceCount
		if err := s.RecordProgress(ctx, r, slice); err != nil {
			return err
		}
	}
	return nil
}

// benchmarkCommits runs commit once per iteration, each on a run of its
// own, and reports the bytes handed to s per run.
func benchmarkCommits(b *testing.B, s *sqlite.Store, commit func(ctx context.Context, id string) error) {
	ctx := b.Context()
	before := s.BytesWritten()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := commit(ctx, "run-"+strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(s.BytesWritten()-before)/float64(b.N), "store-B/op")
}

// benchRun is a new running run of input, with its checkpoint.
func benchRun(id string, input workflow.Object) store.Run {
	now := time.Now().UTC()
	return store.Run{
		ID: id, DeploymentID: "dep", ArtifactID: "wf", ArtifactVersion: 1, Status: store.RunRunning,
		ResumeReadiness: "not_applicable", Input: input, CreatedAt: now, UpdatedAt: now,
		Checkpoint: &workflow.Snapshot{Status: workflow.StatusRunning, Scopes: map[string]*workflow.Scope{
			"root": {ID: "root", Input: input, State: workflow.Object{}}}},
	}
}

func ptr[T any](v T) *T { return &v }
