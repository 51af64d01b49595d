// Package retention owns the pruning of finished runs: one background
// loop per server, started with it and stopped with it, that deletes the
// runs whose retention has passed in bounded batches, drops the
// tombstones whose own time has passed and the idempotency keys of run
// starts whose window has, gives the space freed back to the
// file system (SQLite) and samples the store's size.
//
// It does not decide how long a run is kept: the store stamps each run
// with its expiry when it ends (store.RunExpiry: the deployment's
// retention, else the server's). It never touches a run that has not
// ended.
package retention

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/store"
)

// DefaultBatch is the prune batch of a server: small enough that one
// batch, one write, holds the store's writer for about half a
// millisecond on SQLite (some 30 µs a run of one step; docs/performance.md,
// "Retention"), and large enough to prune thousands of runs a second.
var DefaultBatch = store.PruneLimit{Runs: 16, Rows: 256}

// Bounds of one pass, so that a pass ends (and samples the size, drops
// tombstones) even while runs expire faster than it prunes; the next
// pass then starts at once.
const (
	maxBatches     = 1000 // prune batches
	maxDrops       = 100  // tombstone deletes, of dropBatch each
	dropBatch      = 1000
	maxReclaims    = 64 // ReclaimSpace calls: 32 MiB of SQLite pages
	minBatchPause  = 100 * time.Microsecond
	maxBatchPause  = 50 * time.Millisecond
	defaultTimeout = 30 * time.Second // one store call
)

// Options configure a Pruner.
type Options struct {
	// Batch bounds each prune batch: DefaultBatch when zero.
	Batch store.PruneLimit
	// Interval is how long the pruner waits after a pass that left
	// nothing to prune: config.DefaultPruneInterval when zero.
	Interval time.Duration
	// Tombstones is how long a pruned run's tombstone is kept:
	// config.DefaultTombstoneRetention when zero.
	Tombstones time.Duration
	// Now is the clock the expiries are compared with: time.Now when nil.
	Now func() time.Time
	// Metrics record runs pruned, batch times and the store's size; nil
	// records nothing.
	Metrics *metrics.Metrics
	// Passes, when set, is sent each Pass as it ends, without blocking:
	// a pass that finds the channel full is not sent. For tests and the
	// soak benchmark.
	Passes chan<- Pass
}

// OptionsFor are the options that the server's retention block asks
// for (nil: the defaults).
func OptionsFor(r *config.Retention, m *metrics.Metrics) Options {
	tombstones := r.Tombstones()
	if tombstones == 0 {
		tombstones = time.Nanosecond // none kept: dropped at the next pass
	}
	return Options{Batch: DefaultBatch, Interval: r.Interval(), Tombstones: tombstones, Metrics: m}
}

// Pass is what one pass did.
type Pass struct {
	Pruned  int // runs deleted
	Batches int // prune batches (store writes) it took
	Dropped int // tombstones dropped
	Keys    int // expired idempotency keys dropped
	// Deliveries is how many webhook delivery ids it forgot, their
	// dedup window past (a store that keeps webhooks: store.Webhooks).
	Deliveries int
	Size       int64 // the store's size at its end, in bytes
	// Full is set when the pass stopped at its bound with runs left to
	// prune: the next one starts at once.
	Full bool
	Took time.Duration
	Err  error // the store error that ended it early
}

// Pruner is the background loop of one store's retention.
type Pruner struct {
	store  store.RunRetention
	opts   Options
	cancel context.CancelFunc
	done   chan struct{} // closed when the loop has returned
}

// Start starts pruning s with opts, a first pass at once, until Stop.
func Start(s store.RunRetention, opts Options) *Pruner {
	if opts.Batch.Runs <= 0 {
		opts.Batch = DefaultBatch
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Interval <= 0 {
		opts.Interval = config.DefaultPruneInterval
	}
	if opts.Tombstones <= 0 {
		opts.Tombstones = config.DefaultTombstoneRetention
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Pruner{store: s, opts: opts, cancel: cancel, done: make(chan struct{})}
	go p.loop(ctx)
	return p
}

// Stop ends the loop, interrupting a pass (a batch in its store write
// commits or fails as a whole), and waits for it within ctx. A nil
// Pruner is stopped already.
func (p *Pruner) Stop(ctx context.Context) error {
	if p == nil {
		return nil
	}
	p.cancel()
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop the pruner: %w", ctx.Err())
	}
}

// loop runs a pass, then waits Interval (none after a full pass), until
// ctx ends.
func (p *Pruner) loop(ctx context.Context) {
	defer close(p.done)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		pass := p.pass(ctx)
		if ctx.Err() != nil {
			return // stopped mid-pass: nothing to report
		}
		p.report(pass)
		wait := p.opts.Interval
		if pass.Full {
			wait = 0
		}
		timer.Reset(wait)
	}
}

// report records a pass in the metrics, the log and Passes.
func (p *Pruner) report(pass Pass) {
	if pass.Err != nil {
		p.opts.Metrics.PruneFailed()
		slog.Warn("pruning finished runs failed; the next pass tries again", "pruned", pass.Pruned, "err", pass.Err)
	} else if pass.Pruned > 0 {
		slog.Debug("pruned finished runs", "runs", pass.Pruned, "batches", pass.Batches, "took", pass.Took)
	}
	if p.opts.Passes != nil {
		select {
		case p.opts.Passes <- pass:
		default:
		}
	}
}

// pass prunes the expired runs in batches until none is left (or the
// pass's bound), drops the old tombstones and the expired idempotency
// keys, reclaims free space and
// samples the store's size. Between two batches it pauses as long as the
// last one took, so that the writer spends at least as long on commits as
// on pruning.
func (p *Pruner) pass(ctx context.Context) (pass Pass) {
	start := time.Now()
	defer func() { pass.Took = time.Since(start) }()
	for pass.Batches < maxBatches {
		t := time.Now()
		n, err := call(ctx, func(ctx context.Context) (int, error) { return p.store.PruneRuns(ctx, p.opts.Now(), p.opts.Batch) })
		took := time.Since(t)
		if err != nil {
			pass.Err = err
			return pass
		}
		pass.Batches++
		p.opts.Metrics.PruneBatch(n, took)
		pass.Pruned += n
		if n == 0 {
			break
		}
		if !pause(ctx, took) {
			return pass
		}
	}
	pass.Full = pass.Batches == maxBatches
	before, now := p.opts.Now().Add(-p.opts.Tombstones), p.opts.Now()
	pass.Dropped, pass.Err = drop(ctx, func(ctx context.Context) (int, error) { return p.store.DropTombstones(ctx, before, dropBatch) })
	p.opts.Metrics.TombstonesDropped(pass.Dropped)
	if pass.Err != nil {
		return pass
	}
	if pass.Keys, pass.Err = drop(ctx, func(ctx context.Context) (int, error) { return p.store.DropIdempotencyKeys(ctx, now, dropBatch) }); pass.Err != nil {
		return pass
	}
	if hooks, ok := p.store.(deliveryPruner); ok {
		pass.Deliveries, pass.Err = drop(ctx, func(ctx context.Context) (int, error) { return hooks.PruneDeliveries(ctx, now, dropBatch) })
		p.opts.Metrics.WebhookDeliveriesPruned(pass.Deliveries)
		if pass.Err != nil {
			return pass
		}
	}
	for range maxReclaims {
		t := time.Now()
		more, err := call(ctx, p.store.ReclaimSpace)
		if err != nil {
			pass.Err = err
			return pass
		}
		if !more || !pause(ctx, time.Since(t)) {
			break
		}
	}
	size, err := call(ctx, p.store.StoreSize)
	if err != nil {
		pass.Err = err
		return pass
	}
	p.opts.Metrics.StoreSize(size)
	pass.Size = size
	return pass
}

// drop deletes in batches of dropBatch, with one store call each, until
// a batch deletes fewer or maxDrops batches have run, and returns how
// many it deleted.
func drop(ctx context.Context, batch func(context.Context) (int, error)) (int, error) {
	total := 0
	for range maxDrops {
		n, err := call(ctx, batch)
		total += n
		if err != nil || n < dropBatch {
			return total, err
		}
	}
	return total, nil
}

// call runs one store call within defaultTimeout.
func call[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, defaultTimeout)
	defer cancel()
	return f(ctx)
}

// pause waits d, within [minBatchPause, maxBatchPause], and reports
// whether ctx is still live.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(min(max(d, minBatchPause), maxBatchPause))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// deliveryPruner is the part of store.Webhooks a pass prunes: the
// delivery ids whose dedup window has passed.
type deliveryPruner interface {
	PruneDeliveries(ctx context.Context, now time.Time, limit int) (int, error)
}
