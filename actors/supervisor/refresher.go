package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/session"
)

// CatalogLister lists and stores one connection's catalog (Handle does,
// through the connection's session).
type CatalogLister interface {
	RefreshCatalog(ctx context.Context, connection string) (catalog.Snapshot, error)
}

// RefresherOptions bound a Refresher.
type RefresherOptions struct {
	// Concurrency is how many catalogs are listed at once; 0 is
	// DefaultRefreshConcurrency.
	Concurrency int
	// Timeout bounds one refresh (a connect, if the session is not open,
	// and the listing), from its own start: the time it waited for a
	// worker does not count.
	Timeout time.Duration
	// Retry is the backoff before a refresh that failed is tried again;
	// its zero value is DefaultRefreshRetry.
	Retry session.Policy
	// Clock times the retries; nil is the wall clock.
	Clock session.Clock
}

// DefaultRefreshRetry is the backoff of a refresh that failed: 5 s
// doubling up to 5 minutes, jittered.
var DefaultRefreshRetry = session.Policy{MinBackoff: 5 * time.Second, MaxBackoff: 5 * time.Minute, Jitter: 0.2}

// DefaultRefreshConcurrency is two refreshes per CPU mcpflow may use, at
// most 16: a refresh mostly waits on its upstream, but its connect,
// initialize and listing cost CPU here, and a start with thousands of
// sources must leave the CPU to the requests being served.
func DefaultRefreshConcurrency() int {
	return min(2*runtime.GOMAXPROCS(0), 16)
}

// Refresher lists connections' catalogs in the background, at most
// Concurrency at a time, first come first served, each connection queued
// at most once. A refresh that fails (its upstream timed out, or answered
// the listing with an error) is tried again after a backoff, and logged
// once until it succeeds; one whose connection is unavailable or degraded
// is not: its session reconnects on its own schedule and lists the
// catalog when it opens. It runs until Stop.
type Refresher struct {
	lister CatalogLister
	opts   RefresherOptions
	clock  session.Clock

	mu       sync.Mutex
	queue    []string
	waiting  map[string][]*refreshBatch // the queued connections, and who waits for their next attempt
	failures map[string]*refreshRetry   // the connections whose last refresh failed
	stopped  bool

	wake   chan struct{} // room for one: the queue has work
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// refreshBatch is one Refresh call's connections: done is closed once
// each has had an attempt. Workers count attempts concurrently.
type refreshBatch struct {
	left atomic.Int64
	done chan struct{}
}

// attempted counts one attempt, closing done after the last.
func (b *refreshBatch) attempted() {
	if b.left.Add(-1) == 0 {
		close(b.done)
	}
}

// refreshRetry is a failing connection's backoff and pending retry.
type refreshRetry struct {
	backoff session.Backoff
	timer   session.Timer
}

// StartRefresher starts a refresher that lists catalogs through lister.
func StartRefresher(lister CatalogLister, opts RefresherOptions) *Refresher {
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultRefreshConcurrency()
	}
	if opts.Retry == (session.Policy{}) {
		opts.Retry = DefaultRefreshRetry
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Refresher{
		lister: lister, opts: opts, clock: opts.Clock,
		waiting: map[string][]*refreshBatch{}, failures: map[string]*refreshRetry{},
		wake: make(chan struct{}, 1), cancel: cancel,
	}
	if r.clock == nil {
		r.clock = session.SystemClock()
	}
	for range opts.Concurrency {
		r.wg.Add(1)
		go r.work(ctx)
	}
	return r
}

// Refresh queues connections (those queued already keep their place) and
// returns a channel closed once each has had an attempt, whatever its
// outcome, or the refresher stopped.
func (r *Refresher) Refresh(connections ...string) <-chan struct{} {
	b := &refreshBatch{done: make(chan struct{})}
	b.left.Store(int64(len(connections)))
	r.mu.Lock()
	if r.stopped || len(connections) == 0 {
		r.mu.Unlock()
		close(b.done)
		return b.done
	}
	for _, id := range connections {
		r.enqueueLocked(id, b)
	}
	r.mu.Unlock()
	r.signal()
	return b.done
}

// enqueueLocked queues id (once) for batch b (nil: nobody waits).
func (r *Refresher) enqueueLocked(id string, b *refreshBatch) {
	batches, queued := r.waiting[id]
	if !queued {
		r.queue = append(r.queue, id)
	}
	if b != nil {
		batches = append(batches, b)
	}
	r.waiting[id] = batches
}

// Stop ends the workers (a refresh in progress is cancelled) and the
// pending retries, waiting for the workers until ctx ends.
func (r *Refresher) Stop(ctx context.Context) error {
	r.mu.Lock()
	r.stopped = true
	for _, f := range r.failures {
		if f.timer != nil {
			f.timer.Stop()
		}
	}
	left := r.waiting
	r.queue, r.waiting = nil, map[string][]*refreshBatch{}
	r.mu.Unlock()
	for _, batches := range left {
		finish(batches)
	}
	r.cancel()
	done := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop catalog refresher: %w", ctx.Err())
	}
}

// signal wakes a worker.
func (r *Refresher) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *Refresher) work(ctx context.Context) {
	defer r.wg.Done()
	for {
		id, batches, ok := r.next()
		if !ok {
			select {
			case <-ctx.Done():
				return
			case <-r.wake:
			}
			continue
		}
		r.signal() // another worker may take what is left
		err := r.refresh(ctx, id)
		finish(batches)
		if ctx.Err() != nil {
			return
		}
		r.settle(id, err)
	}
}

// next takes the first queued connection and who waits for it.
func (r *Refresher) next() (string, []*refreshBatch, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.queue) == 0 {
		return "", nil, false
	}
	id := r.queue[0]
	r.queue[0] = ""
	r.queue = r.queue[1:]
	batches := r.waiting[id]
	delete(r.waiting, id)
	return id, batches, true
}

// refresh lists id's catalog within Timeout.
func (r *Refresher) refresh(ctx context.Context, id string) error {
	if r.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.opts.Timeout)
		defer cancel()
	}
	_, err := r.lister.RefreshCatalog(ctx, id)
	return err
}

// settle records how id's refresh went: a failure is retried after a
// backoff, and logged only when it is the first since a success.
func (r *Refresher) settle(id string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.failures[id]
	switch {
	case err == nil:
		if f != nil {
			slog.Info("catalog refreshed after failed attempts", "connection", id, "attempts", f.backoff.Failures()+1)
			delete(r.failures, id)
		}
		return
	case errors.Is(err, session.ErrUnavailable), errors.Is(err, session.ErrDegraded):
		// Its session actor logged why, once, and lists the catalog when
		// a session opens.
		slog.Debug("catalog refresh: connection unavailable", "connection", id, "err", err)
		return
	case r.stopped:
		return
	}
	if f == nil {
		f = &refreshRetry{backoff: session.Backoff{Policy: r.opts.Retry}}
		r.failures[id] = f
	}
	wait := f.backoff.Next()
	if f.backoff.Failures() == 1 {
		slog.Warn("catalog not refreshed; retrying in the background", "connection", id, "retry_in", wait, "err", err)
	} else {
		slog.Debug("catalog refresh failed again", "connection", id, "attempts", f.backoff.Failures(), "retry_in", wait, "err", err)
	}
	if f.timer != nil {
		f.timer.Stop()
	}
	f.timer = r.clock.AfterFunc(wait, func() {
		r.mu.Lock()
		if !r.stopped {
			r.enqueueLocked(id, nil)
		}
		r.mu.Unlock()
		r.signal()
	})
}

// finish counts one attempt in each batch, closing those that are done.
func finish(batches []*refreshBatch) {
	for _, b := range batches {
		b.attempted()
	}
}
