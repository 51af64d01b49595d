package supervisor

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
)

// catalogSaveTimeout bounds one catalog save from its own start: how long
// the snapshot waited to be listed or saved does not count.
const catalogSaveTimeout = 30 * time.Second

// catalogSavers is how many catalog saves run at once: enough for the
// store to commit them together (the SQLite store's writer batches
// concurrent commits into one transaction and one sync), few enough that
// thousands of listings at a start queue here, each with its whole
// timeout still ahead, rather than on the store's lock.
const catalogSavers = 16

// catalogSaveRetry is the backoff between the attempts of a save that
// failed: 1 s doubling up to a minute, jittered.
var catalogSaveRetry = session.Policy{MinBackoff: time.Second, MaxBackoff: time.Minute, Jitter: 0.2}

// saver stores the catalog snapshots the supervisor's sessions list, off
// its inbox, catalogSavers at a time (the store has one writer: thousands
// of concurrent saves only queue on its lock, and time out there, as
// 1,000 of 10,000 did at a start), and one at a time per connection, in
// order. A connection's newest snapshot replaces one still waiting, so the
// queue holds at most one snapshot per connection.
// Each save has catalogSaveTimeout from its own start; a save that fails
// is logged once and tried again after a backoff, until it succeeds, a
// newer snapshot of its connection replaces it or the supervisor stops.
// Whoever asked for the refresh is answered by the first attempt.
type saver struct {
	engine      *actor.Engine // sends the answers
	catalogs    store.Catalogs
	clock       session.Clock
	retryPolicy session.Policy // catalogSaveRetry

	mu      sync.Mutex
	pending map[string]*pendingSave
	order   []string        // the connections waiting, first come first served
	saving  map[string]bool // the connections whose save runs now
	retry   session.Timer
	retryAt time.Time
	stopped bool

	wake    chan struct{} // room for one: something is due
	cancel  context.CancelFunc
	workers sync.WaitGroup
}

// pendingSave is the snapshot of one connection waiting to be saved.
type pendingSave struct {
	snap    catalog.Snapshot
	answers []reply.Address
	due     time.Time // not before: a retry waits for its backoff
	backoff session.Backoff
	failing bool // a failure was logged; the next ones are not
}

// newSaver returns a saver over catalogs, timed by clock, that answers
// through engine; start runs it.
func newSaver(engine *actor.Engine, catalogs store.Catalogs, clock session.Clock) *saver {
	return &saver{engine: engine, catalogs: catalogs, clock: clock, retryPolicy: catalogSaveRetry,
		pending: map[string]*pendingSave{}, saving: map[string]bool{}, wake: make(chan struct{}, 1)}
}

// start runs the saver's workers until stop.
func (s *saver) start() {
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	for range catalogSavers {
		s.workers.Add(1)
		go s.run(ctx)
	}
}

// stop ends the workers, waiting for the saves in progress (cancelled)
// within catalogSaveTimeout, and answers the refreshes still waiting.
func (s *saver) stop() {
	if s.cancel == nil {
		return // never started
	}
	s.cancel()
	done := make(chan struct{})
	go func() {
		s.workers.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(catalogSaveTimeout):
		slog.Warn("a catalog save did not end with the supervisor")
	}
	s.mu.Lock()
	s.stopped = true
	if s.retry != nil {
		s.retry.Stop()
	}
	left := s.pending
	s.pending, s.order = map[string]*pendingSave{}, nil
	s.mu.Unlock()
	for id, p := range left {
		s.answer(p, notSavedAtStop(id))
	}
}

// notSavedAtStop is the answer to a refresh whose catalog the saver did
// not save because it stopped.
func notSavedAtStop(id string) error {
	return fmt.Errorf("catalog of %q not saved: %w: shutting down", id, session.ErrUnavailable)
}

// save queues snap, answering answer (unless zero) once it is saved or
// its first attempt failed.
func (s *saver) save(snap catalog.Snapshot, answer reply.Address) {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		err := fmt.Errorf("catalog of %q not saved: %w: shutting down", snap.ConnectionID, session.ErrUnavailable)
		reply.Send(s.engine, answer, CatalogRefreshed{CorrelationID: answer.Correlation, Error: reply.Fail(err)})
		return
	}
	id := snap.ConnectionID
	p := s.pending[id]
	if p == nil {
		p = &pendingSave{backoff: session.Backoff{Policy: s.retryPolicy}}
		s.pending[id] = p
		s.order = append(s.order, id)
	}
	// The newest listing wins, and is due at once: it may not fail as
	// the one it replaces did.
	p.snap, p.due = snap, time.Time{}
	if !answer.IsZero() {
		p.answers = append(p.answers, answer)
	}
	s.mu.Unlock()
	s.signal()
}

// signal wakes the worker.
func (s *saver) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *saver) run(ctx context.Context) {
	defer s.workers.Done()
	for ctx.Err() == nil {
		id, p := s.next()
		if p == nil {
			select {
			case <-ctx.Done():
				return
			case <-s.wake:
			}
			continue
		}
		s.signal() // another worker may take what is left
		s.attempt(ctx, id, p)
		s.mu.Lock()
		delete(s.saving, id)
		s.mu.Unlock()
		s.signal() // a newer snapshot of id may wait for this one
	}
}

// next takes the first snapshot that is due, of a connection with no save
// running, off the queue; or it arms the retry timer for the earliest one
// not due yet and returns nil.
func (s *saver) next() (string, *pendingSave) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	var earliest time.Time
	for i, id := range s.order {
		if s.saving[id] {
			continue
		}
		p := s.pending[id]
		if !p.due.After(now) {
			s.order = append(s.order[:i], s.order[i+1:]...)
			delete(s.pending, id)
			s.saving[id] = true
			return id, p
		}
		if earliest.IsZero() || p.due.Before(earliest) {
			earliest = p.due
		}
	}
	if !earliest.IsZero() && (s.retryAt.IsZero() || earliest.Before(s.retryAt) || !s.retryAt.After(now)) {
		if s.retry != nil {
			s.retry.Stop()
		}
		s.retryAt = earliest
		s.retry = s.clock.AfterFunc(earliest.Sub(now), s.signal)
	}
	return "", nil
}

// attempt saves p once, answers whoever waits for it, and queues it again
// after a backoff if it failed (unless a newer snapshot replaced it).
func (s *saver) attempt(ctx context.Context, id string, p *pendingSave) {
	err := ctx.Err() // a worker may take a save as the saver stops
	if err == nil {
		sctx, cancel := context.WithTimeout(ctx, catalogSaveTimeout)
		err = s.catalogs.SaveCatalog(sctx, p.snap)
		cancel()
	}
	switch {
	case err != nil && ctx.Err() != nil:
		err = notSavedAtStop(id)
	case err != nil:
		err = fmt.Errorf("save catalog of %q: %w", id, err)
	}
	s.answer(p, err)
	switch {
	case err == nil && p.failing:
		slog.Info("catalog saved after failed attempts", "connection", id, "attempts", p.backoff.Failures()+1)
	case err == nil:
		slog.Info("catalog refreshed", "connection", id, "tools", len(p.snap.Tools))
	case ctx.Err() != nil:
		// The supervisor stops.
	default:
		wait := p.backoff.Next()
		if p.failing {
			slog.Debug("catalog save failed again", "connection", id, "attempts", p.backoff.Failures(), "retry_in", wait, "err", err)
		} else {
			p.failing = true
			slog.Warn("catalog not saved; retrying in the background", "connection", id, "retry_in", wait, "err", err)
		}
		s.requeue(id, p, wait)
	}
}

// requeue queues a failed save again, due after wait, unless a newer
// snapshot of its connection waits already.
func (s *saver) requeue(id string, p *pendingSave, wait time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, newer := s.pending[id]; newer || s.stopped {
		return
	}
	p.due = s.clock.Now().Add(wait)
	s.pending[id] = p
	s.order = append(s.order, id)
}

// answer tells whoever waits for p how its first attempt went.
func (s *saver) answer(p *pendingSave, err error) {
	failure := reply.Fail(err)
	for _, to := range p.answers {
		reply.Send(s.engine, to, CatalogRefreshed{CorrelationID: to.Correlation, Snapshot: p.snap, Error: failure})
	}
	p.answers = nil
}
