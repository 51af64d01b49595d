package supervisor_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/fakes"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// gatedLister is a CatalogLister whose refreshes wait for the test: each
// announces itself on started, then answers what release sends it (nil:
// listed). It records how many ran at once, at most.
type gatedLister struct {
	started chan string
	release chan error

	mu         sync.Mutex
	running    int
	mostAtOnce int
	calls      []string
}

func newGatedLister() *gatedLister {
	return &gatedLister{started: make(chan string, 100), release: make(chan error)}
}

func (g *gatedLister) RefreshCatalog(ctx context.Context, id string) (catalog.Snapshot, error) {
	g.mu.Lock()
	g.running++
	g.mostAtOnce = max(g.mostAtOnce, g.running)
	g.calls = append(g.calls, id)
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.running--
		g.mu.Unlock()
	}()
	g.started <- id
	select {
	case err := <-g.release:
		return catalog.Snapshot{ConnectionID: id}, err
	case <-ctx.Done():
		return catalog.Snapshot{}, ctx.Err()
	}
}

// figures returns the most refreshes that ran at once and every call.
func (g *gatedLister) figures() (int, []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.mostAtOnce, slices.Clone(g.calls)
}

// next waits for a refresh to start and returns its connection.
func (g *gatedLister) next(t *testing.T) string {
	t.Helper()
	select {
	case id := <-g.started:
		return id
	case <-time.After(patience):
		is.New(t).Fail() // a refresh starts
		return ""
	}
}

func startRefresher(t *testing.T, lister supervisor.CatalogLister, opts supervisor.RefresherOptions) *supervisor.Refresher {
	t.Helper()
	r := supervisor.StartRefresher(lister, opts)
	t.Cleanup(func() { is.New(t).NoErr(r.Stop(ctx(t))) })
	return r
}

// done reports whether ch is closed.
func done(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestRefresherListsAtMostItsConcurrencyAtOnce(t *testing.T) {
	is := is.New(t)
	g := newGatedLister()
	r := startRefresher(t, g, supervisor.RefresherOptions{Concurrency: 3, Timeout: time.Minute})
	var ids []string
	for i := range 12 {
		ids = append(ids, fmt.Sprintf("src%02d.default", i))
	}
	all := r.Refresh(ids...)
	r.Refresh(ids[5:9]...) // queued already: they keep their place, and are listed once

	for range 3 {
		g.next(t)
	}
	is.True(!done(all))
	// Each refresh that ends lets one more start, never a fourth at once.
	for range len(ids) - 3 {
		g.release <- nil
		g.next(t)
	}
	for range 3 {
		g.release <- nil
	}
	select {
	case <-all:
	case <-time.After(patience):
		is.Fail() // every connection of the batch had its attempt
	}
	most, calls := g.figures()
	is.Equal(most, 3) // three at once, no more
	slices.Sort(calls)
	is.Equal(calls, ids) // each listed once, first come first served
}

func TestRefresherRetriesATimedOutRefreshWithBackoffAndLogsItOnce(t *testing.T) {
	is := is.New(t)
	logs := fakes.CaptureLogs(t)
	clock := session.NewManualClock(time.Now())
	g := newGatedLister()
	retry := session.Policy{MinBackoff: 10 * time.Second, MaxBackoff: time.Minute}
	r := startRefresher(t, g, supervisor.RefresherOptions{Concurrency: 2, Timeout: time.Minute, Retry: retry, Clock: clock})

	first := r.Refresh("slow.default")
	is.Equal(g.next(t), "slow.default")
	g.release <- fmt.Errorf("list: %w", context.DeadlineExceeded) // the upstream timed out
	<-first                                                       // the batch counts the failed attempt
	awaitPending(t, clock, 10*time.Second)                        // the retry waits for its backoff

	clock.Advance(10 * time.Second)
	is.Equal(g.next(t), "slow.default")
	g.release <- fmt.Errorf("list: %w", context.DeadlineExceeded) // and again
	awaitPending(t, clock, 20*time.Second)                        // the backoff doubles

	clock.Advance(20 * time.Second)
	is.Equal(g.next(t), "slow.default")
	g.release <- nil // the upstream answers at last
	waitLogged(t, logs, "catalog refreshed after failed attempts")
	is.Equal(len(logs.Lines("catalog not refreshed; retrying in the background")), 1) // the failure is logged once
	is.True(strings.Contains(logs.Lines("catalog refreshed after failed attempts")[0], "attempts=3"))
	is.Equal(len(clock.Pending()), 0) // no retry is left once it succeeded
}

func TestRefresherLeavesAnUnavailableConnectionToItsSession(t *testing.T) {
	is := is.New(t)
	clock := session.NewManualClock(time.Now())
	g := newGatedLister()
	r := startRefresher(t, g, supervisor.RefresherOptions{Concurrency: 1, Timeout: time.Minute, Clock: clock})
	batch := r.Refresh("down.default")
	g.next(t)
	g.release <- fmt.Errorf("connection %q: %w: connection refused", "down.default", session.ErrUnavailable)
	<-batch
	// The session reconnects on its own backoff and lists the catalog
	// when it opens: the refresher arms no retry of its own.
	r.Refresh("other.default")
	is.Equal(g.next(t), "other.default") // the refresher went on to the next
	g.release <- nil
	is.Equal(len(clock.Pending()), 0)
}

func TestRefresherStopEndsARefreshInProgressAndItsWaiters(t *testing.T) {
	is := is.New(t)
	g := newGatedLister()
	r := supervisor.StartRefresher(g, supervisor.RefresherOptions{Concurrency: 1, Timeout: time.Minute})
	running := r.Refresh("a.default")
	queued := r.Refresh("b.default")
	g.next(t)
	is.NoErr(r.Stop(ctx(t))) // the refresh in progress is cancelled
	is.True(done(running))
	is.True(done(queued))
	is.True(done(r.Refresh("c.default"))) // a stopped refresher lists nothing
	_, calls := g.figures()
	is.Equal(calls, []string{"a.default"})
}

// awaitPending waits until the clock has a timer due within d, and no
// earlier than d less a fifth (the backoff's jitter is at most that).
func awaitPending(t *testing.T, clock *session.ManualClock, d time.Duration) {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	ok := clock.WaitFor(c, func(p []time.Duration) bool {
		return slices.ContainsFunc(p, func(x time.Duration) bool { return x <= d && x >= d-d/5 })
	})
	if !ok {
		t.Logf("no timer of about %s; pending %v", d, clock.Pending())
	}
	is.New(t).True(ok) // the retry is armed
}

// waitLogged polls the captured logs until a line has substr.
func waitLogged(t *testing.T, logs *fakes.Logs, substr string) {
	t.Helper()
	poll.For(t, fmt.Sprintf("a log line with %q", substr), patience, func() bool { return len(logs.Lines(substr)) > 0 })
}
