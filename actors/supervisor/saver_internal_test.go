package supervisor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/reply/replytest"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/fakes"
)

const patience = 5 * time.Second

// slowCatalogs stores catalogs in memory; each save first waits for the
// test (started, then release: the error to fail with, nil to save) and
// records how long its context gives it.
type slowCatalogs struct {
	*store.Memory
	started chan string
	release chan error
	stored  chan string // each connection whose save landed

	mu     sync.Mutex
	budget []time.Duration // each save's deadline, from its start
	saved  []int64         // FetchedAtEpochMs of each snapshot saved
}

func newSlowCatalogs() *slowCatalogs {
	return &slowCatalogs{Memory: store.NewMemory(), started: make(chan string, 16), release: make(chan error), stored: make(chan string, 16)}
}

func (s *slowCatalogs) SaveCatalog(ctx context.Context, snap catalog.Snapshot) error {
	deadline, _ := ctx.Deadline()
	s.mu.Lock()
	s.budget = append(s.budget, time.Until(deadline))
	s.mu.Unlock()
	s.started <- snap.ConnectionID
	select {
	case err := <-s.release:
		if err != nil {
			return err
		}
	case <-ctx.Done():
		return ctx.Err()
	}
	s.mu.Lock()
	s.saved = append(s.saved, snap.FetchedAtEpochMs)
	s.mu.Unlock()
	err := s.Memory.SaveCatalog(ctx, snap)
	s.stored <- snap.ConnectionID
	return err
}

func (s *slowCatalogs) next(t *testing.T) string {
	t.Helper()
	select {
	case id := <-s.started:
		return id
	case <-time.After(patience):
		is.New(t).Fail() // a save starts
		return ""
	}
}

func (s *slowCatalogs) figures() ([]time.Duration, []int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.budget...), append([]int64(nil), s.saved...)
}

// answers makes an engine with a router for the saver's answers, which
// the test waits for; both stop with the test.
func answers(t *testing.T) (*actor.Engine, *reply.Router) {
	t.Helper()
	is := is.New(t)
	e, err := actor.NewEngine(actor.NewEngineConfig())
	is.NoErr(err) // new engine
	return e, replytest.Router(t, e, "test")
}

func startSaver(t *testing.T, catalogs store.Catalogs, clock session.Clock) (*saver, *reply.Router) {
	t.Helper()
	e, r := answers(t)
	s := newSaver(e, catalogs, clock)
	s.start()
	t.Cleanup(s.stop)
	return s, r
}

func snapshot(id string, fetched int64) catalog.Snapshot {
	return catalog.Snapshot{ConnectionID: id, FetchedAtEpochMs: fetched, MaxAgeSeconds: catalog.DefaultMaxAgeSeconds,
		Tools: []catalog.Tool{{Name: "echo"}}, Resources: []catalog.Resource{}, Prompts: []catalog.Prompt{}}
}

func TestASaveThatTimedOutIsRetriedAfterABackoffAndLoggedOnce(t *testing.T) {
	is := is.New(t)
	logs := fakes.CaptureLogs(t)
	clock := session.NewManualClock(time.Now())
	cats := newSlowCatalogs()
	e, replies := answers(t)
	s := newSaver(e, cats, clock)
	s.retryPolicy = session.Policy{MinBackoff: time.Second, MaxBackoff: time.Minute} // no jitter: exact waits
	s.start()
	t.Cleanup(s.stop)

	asked := reply.Expect[CatalogRefreshed](replies)
	s.save(snapshot("a.default", 1), asked.To())
	cats.next(t)
	cats.release <- fmt.Errorf("database is locked: %w", context.DeadlineExceeded)
	got, err := asked.Wait(context.Background())
	is.NoErr(err)
	is.True(errors.Is(got.Error.Err(), context.DeadlineExceeded)) // the asker hears of the first attempt

	for _, wait := range []time.Duration{time.Second, 2 * time.Second} {
		awaitTimer(t, clock, wait) // the retry waits for its backoff, doubling
		clock.Advance(wait)
		cats.next(t)
		if wait == time.Second {
			cats.release <- fmt.Errorf("database is locked: %w", context.DeadlineExceeded)
		}
	}
	cats.release <- nil
	select {
	case <-cats.stored:
	case <-time.After(patience):
		is.Fail() // the third attempt lands
	}
	stored, err := cats.Memory.GetCatalog(context.Background(), "a.default")
	is.NoErr(err)
	is.Equal(stored.FetchedAtEpochMs, int64(1))
	is.Equal(len(logs.Lines("catalog not saved; retrying in the background")), 1) // logged once, not per attempt
	budgets, _ := cats.figures()
	for _, b := range budgets {
		is.True(b > catalogSaveTimeout-time.Second) // each attempt has the whole timeout
	}
}

func TestTheNewestSnapshotOfAConnectionReplacesOneWaiting(t *testing.T) {
	is := is.New(t)
	cats := newSlowCatalogs()
	s, replies := startSaver(t, cats, session.NewManualClock(time.Now()))

	s.save(snapshot("a.default", 1), reply.Address{})
	cats.next(t) // a's first save holds the store
	second, third := reply.Expect[CatalogRefreshed](replies), reply.Expect[CatalogRefreshed](replies)
	s.save(snapshot("a.default", 2), second.To())     // waits for the first: one save per connection at a time
	s.save(snapshot("a.default", 3), third.To())      // replaces the one waiting
	s.save(snapshot("b.default", 1), reply.Address{}) // another connection's goes on meanwhile
	is.Equal(cats.next(t), "b.default")
	cats.release <- nil
	cats.release <- nil
	is.Equal(cats.next(t), "a.default")
	cats.release <- nil
	for _, w := range []*reply.Expected[CatalogRefreshed]{second, third} {
		got, err := w.Wait(context.Background())
		is.NoErr(err)
		is.NoErr(got.Error.Err())
		is.Equal(got.Snapshot.FetchedAtEpochMs, int64(3)) // both askers get the newest
	}
	stored, err := cats.Memory.GetCatalog(context.Background(), "a.default")
	is.NoErr(err)
	is.Equal(stored.FetchedAtEpochMs, int64(3))
	_, saved := cats.figures()
	is.Equal(len(saved), 3) // a's first, b's, a's newest: a's second never
}

func TestAStoppedSaverAnswersWhoWaits(t *testing.T) {
	is := is.New(t)
	cats := newSlowCatalogs()
	e, replies := answers(t)
	s := newSaver(e, cats, session.NewManualClock(time.Now()))
	s.start()
	s.save(snapshot("a.default", 1), reply.Address{})
	cats.next(t)
	w := reply.Expect[CatalogRefreshed](replies)
	s.save(snapshot("a.default", 2), w.To()) // waits for the save in progress
	s.stop()                                 // cancels the save in progress
	got, err := w.Wait(context.Background())
	is.NoErr(err)
	is.True(errors.Is(got.Error.Err(), session.ErrUnavailable))
	late := reply.Expect[CatalogRefreshed](replies)
	s.save(snapshot("b.default", 1), late.To())
	got, err = late.Wait(context.Background())
	is.NoErr(err)
	is.True(errors.Is(got.Error.Err(), session.ErrUnavailable)) // nothing is saved after the stop
}

// awaitTimer waits until the clock has a timer of exactly d pending.
func awaitTimer(t *testing.T, clock *session.ManualClock, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	ok := clock.WaitFor(ctx, func(p []time.Duration) bool {
		for _, x := range p {
			if x == d {
				return true
			}
		}
		return false
	})
	if !ok {
		t.Logf("no %s timer; pending %v", d, clock.Pending())
	}
	is.New(t).True(ok) // the retry is armed
}
