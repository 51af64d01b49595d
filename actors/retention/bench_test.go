package retention_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpflow/mcpflow/actors/retention"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/actors/store/storetest"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// committers is how many runs commit at once in BenchmarkCommitWhilePruning,
// and rounds how many times its two phases alternate.
const committers, rounds = 8, 4

// BenchmarkCommitWhilePruning measures what pruning costs the runs that
// commit meanwhile: the latency of a run's step commit (RecordProgress),
// from 8 runs committing at once, with no pruning and while the server's
// pruner (DefaultBatch) deletes expired runs, on one durable store
// (SQLite synchronous=FULL; PostgreSQL fsync and synchronous_commit on)
// in the same run: the two phases alternate 4 times, b.N/4 commits
// each. The store is filled first with 10*b.N+1000 expired runs, enough
// that the pruner is still busy when the last phase ends (the benchmark
// fails if not).
//
// It reports each phase's p50 and p99 and the rise of p99 in ms, and how
// many runs the pruner deleted during the second phase. Run it with a
// fixed count: -benchtime=3000x.
func BenchmarkCommitWhilePruning(b *testing.B) {
	srv := pgtest.Start(b, pgtest.Durable())
	for _, st := range []struct {
		name string
		open func(b *testing.B) store.Store
	}{
		{"sqlite", func(b *testing.B) store.Store {
			return benchOpen[*sqlite.Store](b)(sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"),
				sqlite.WithStoreOptions(store.WithRetention(time.Hour))))
		}},
		{"postgres", func(b *testing.B) store.Store {
			return benchOpen[*postgres.Store](b)(postgres.Open(b.Context(), srv.NewDatabase(b), postgres.WithStoreOptions(store.WithRetention(time.Hour))))
		}},
	} {
		b.Run(st.name, func(b *testing.B) {
			s := st.open(b)
			ctx := b.Context()
			expired := 10*b.N + 1000
			if b.N < rounds*stepsPerRun {
				return // the probing run of b.N = 1: measure nothing
			}
			ended := time.Now().Add(-2 * time.Hour) // their hour of retention is over
			if err := storetest.Concurrently(expired, func(i int) error {
				return storetest.FinishedRun(ctx, s, fmt.Sprintf("old-%07d", i), ended)
			}); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			// The phases alternate, rounds times, so that both meet the
			// same noise of a shared disk.
			var idle, pruning []time.Duration
			for round := range rounds {
				idle = append(idle, commitLatencies(ctx, b, s, fmt.Sprintf("idle%d", round), b.N/rounds)...)
				p := retention.Start(s, retention.Options{})
				pruning = append(pruning, commitLatencies(ctx, b, s, fmt.Sprintf("pruning%d", round), b.N/rounds)...)
				if err := p.Stop(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			slices.Sort(idle)
			slices.Sort(pruning)
			_, left, err := s.ListRuns(ctx, store.RunQuery{Status: store.RunCompleted})
			if err != nil {
				b.Fatal(err)
			}
			// The runs the committers finished are kept an hour.
			left -= 2 * rounds * (b.N / rounds / stepsPerRun)
			if left <= 0 {
				b.Fatalf("the pruner ran out of expired runs before the commits ended: fill the store with more")
			}
			p50i, p99i, p50p, p99p := percentile(idle, 50), percentile(idle, 99), percentile(pruning, 50), percentile(pruning, 99)
			b.ReportMetric(ms(p50i), "idle-p50-ms")
			b.ReportMetric(ms(p99i), "idle-p99-ms")
			b.ReportMetric(ms(p50p), "pruning-p50-ms")
			b.ReportMetric(ms(p99p), "pruning-p99-ms")
			b.ReportMetric(ms(p99p-p99i), "p99-rise-ms")
			b.ReportMetric(float64(expired-left), "runs-pruned")
		})
	}
}

// stepsPerRun is how many step commits each run of commitLatencies makes
// before it completes.
const stepsPerRun = 10

// commitLatencies makes n step commits from committers runs at once, each
// run committing stepsPerRun steps and then completing, and returns each
// commit's latency, unsorted.
func commitLatencies(ctx context.Context, b *testing.B, s store.Store, phase string, n int) []time.Duration {
	var (
		mu        sync.Mutex
		latencies = make([]time.Duration, 0, n)
		wg        sync.WaitGroup
		next      = make(chan int)
	)
	for w := range committers {
		wg.Go(func() {
			var r store.Run
			steps := 0
			for i := range next {
				if steps%stepsPerRun == 0 {
					r = store.Run{ID: fmt.Sprintf("%s-%d-%d", phase, w, i), DeploymentID: "dep", Status: store.RunRunning, CreatedAt: time.Now(), UpdatedAt: time.Now()}
					if err := s.CreateRun(ctx, r, nil); err != nil {
						b.Error(err)
						return
					}
				}
				steps++
				r.TraceCount++
				r.UpdatedAt = time.Now()
				if steps%stepsPerRun == 0 {
					r.Status = store.RunCompleted
				}
				start := time.Now()
				err := s.RecordProgress(ctx, r, []workflow.TraceEntry{{FrameID: "root", NodeID: "step", StepType: workflow.NodeCall, Outcome: workflow.OutcomeOK}})
				took := time.Since(start)
				if err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				latencies = append(latencies, took)
				mu.Unlock()
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return latencies
}

// percentile is the q-th percentile of sorted.
func percentile(sorted []time.Duration, q int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, len(sorted)*q/100)]
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// benchOpen fails b unless a store opened, and closes it when b ends.
func benchOpen[S store.Store](b *testing.B) func(S, error) store.Store {
	return func(s S, err error) store.Store {
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			if err := s.Close(); err != nil {
				b.Error(err)
			}
		})
		return s
	}
}
