package retention_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/retention"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/actors/store/storetest"
)

// keep is the retention of the tests' stores.
const keep = 2 * time.Second

// stores opens a store of each kind with a retention of keep, closed when
// t ends.
func stores(t *testing.T) map[string]func(t *testing.T) store.Store {
	return map[string]func(t *testing.T) store.Store{
		"SQLite": func(t *testing.T) store.Store {
			s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "mcpflow.db"), sqlite.WithStoreOptions(store.WithRetention(keep)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		},
		"PostgreSQL": func(t *testing.T) store.Store {
			srv := pgtest.Start(t)
			s, err := postgres.Open(t.Context(), srv.NewDatabase(t), postgres.WithStoreOptions(store.WithRetention(keep)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		},
	}
}

// TestEveryExpiredRunIsGoneWithinAMinute stores 10,000 finished runs
// and some interrupted ones with a retention of 2 s and a pruner running:
// within a minute of the last one's expiry, every finished run is gone,
// and every interrupted one is still there. Under the race detector it
// stores 1,000: storing 10,000 takes minutes there (the README's
// `go test ./...`, without it, runs the 10,000).
func TestEveryExpiredRunIsGoneWithinAMinute(t *testing.T) {
	if testing.Short() {
		t.Skip("stores 10,000 runs")
	}
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			ctx := t.Context()
			s := open(t)
			passes := make(chan retention.Pass, 1)
			m := metrics.New()
			p := retention.Start(s, retention.Options{Interval: 500 * time.Millisecond, Tombstones: time.Hour, Metrics: m, Passes: passes})
			defer func() { is.NoErr(p.Stop(ctx)) }()

			runs, interrupted := storetest.ExpiredRuns, 10
			if raceDetector {
				runs = 1_000
			}
			for i := range interrupted {
				is.NoErr(storetest.InterruptedRun(ctx, s, fmt.Sprintf("waiting-%d", i), time.Now().Add(-time.Hour)))
			}
			is.NoErr(storetest.Concurrently(runs, func(i int) error {
				return storetest.FinishedRun(ctx, s, fmt.Sprintf("run-%05d", i), time.Now())
			}))
			stored := time.Now()
			deadline := time.After(keep + time.Minute) // from the last run's end
			for {
				select {
				case pass := <-passes:
					is.NoErr(pass.Err)
				case <-deadline:
					t.Fatal("finished runs are left a minute after they expired")
				}
				_, total, err := s.ListRuns(ctx, store.RunQuery{Status: store.RunCompleted})
				is.NoErr(err)
				if total == 0 {
					break
				}
			}
			t.Logf("the last of %d runs pruned %v after it was stored (a retention of %v)", runs, time.Since(stored).Round(time.Millisecond), keep)
			_, total, err := s.ListRuns(ctx, store.RunQuery{Status: store.RunInterrupted})
			is.NoErr(err)
			is.Equal(total, interrupted) // interrupted runs survive pruning
			_, err = s.GetRun(ctx, "run-00000")
			is.True(errors.Is(err, store.ErrPruned))
		})
	}
}

// TestStopEndsThePruner stops a pruner that waits between passes: Stop
// returns once its loop has.
func TestStopEndsThePruner(t *testing.T) {
	is := is.New(t)
	passes := make(chan retention.Pass, 1)
	p := retention.Start(store.NewMemory(), retention.Options{Interval: time.Hour, Passes: passes})
	<-passes // the first pass, at once; then it waits an hour
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	is.NoErr(p.Stop(ctx))
}

// TestAPassDropsTheExpiredIdempotencyKeys: a pass drops the keys of run
// starts whose window has passed, and keeps the others.
func TestAPassDropsTheExpiredIdempotencyKeys(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	s := store.NewMemory()
	now := time.Now()
	for _, k := range []struct {
		key   string
		until time.Time
	}{{"old", now.Add(-time.Second)}, {"live", now.Add(time.Hour)}} {
		r := store.Run{ID: "run-" + k.key, DeploymentID: "dep", Status: store.RunRunning, CreatedAt: now.Add(-time.Minute), UpdatedAt: now,
			Idempotency: &store.RunIdempotency{Key: k.key, InputHash: "h", ExpiresAt: k.until}}
		is.NoErr(s.CreateRun(ctx, r, nil))
	}
	passes := make(chan retention.Pass, 1)
	p := retention.Start(s, retention.Options{Interval: time.Hour, Now: func() time.Time { return now }, Passes: passes})
	pass := <-passes
	stop, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	is.NoErr(p.Stop(stop))
	is.NoErr(pass.Err)
	is.Equal(pass.Keys, 1)
	_, err := s.GetIdempotencyKey(ctx, "old")
	is.True(errors.Is(err, store.ErrNotFound)) // expired: dropped
	_, err = s.GetIdempotencyKey(ctx, "live")
	is.NoErr(err) // within its window: kept
}
