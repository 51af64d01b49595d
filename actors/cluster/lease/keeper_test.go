package lease_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/clock"
	"github.com/mcpflow/mcpflow/actors/cluster/lease"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// keeperFixture is a keeper of node-a running on a manual clock.
type keeperFixture struct {
	table  *lease.Table
	keeper *lease.Keeper
	// clock moves only when a test advances it: the keeper renews only
	// then, which pauses a node at will.
	clock *clock.Manual
	ttl   time.Duration
	stop  func() error // cancels Run and waits for it, once
}

// startKeeper starts a keeper of node-a with opts on a new database of
// srv, on a manual clock; it stops when t ends.
func startKeeper(t *testing.T, srv *pgtest.Server, opts lease.KeeperOptions) *keeperFixture {
	t.Helper()
	table, _ := openTable(t, srv, "")
	manual := clock.NewManual(time.Now())
	opts.Clock = manual
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	k, err := lease.NewKeeper(table, "node-a", opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx) }()
	f := &keeperFixture{table: table, keeper: k, clock: manual, ttl: cmp.Or(opts.TTL, lease.DefaultTTL)}
	f.stop = sync.OnceValue(func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(waitFor):
			return errors.New("the keeper did not stop")
		}
	})
	t.Cleanup(func() {
		if err := f.stop(); err != nil {
			t.Error(err)
		}
	})
	return f
}

// interval is the keeper's renewal interval.
func (f *keeperFixture) interval() time.Duration { return f.ttl / 3 }

// advance waits until the keeper has armed its timer, then moves the
// clock d on.
func (f *keeperFixture) advance(t *testing.T, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitFor)
	defer cancel()
	if !f.clock.WaitFor(ctx, func(pending []time.Duration) bool { return len(pending) > 0 }) {
		t.Fatal("the keeper armed no timer")
	}
	f.clock.Advance(d)
}

// loss waits for the keeper's next loss.
func (f *keeperFixture) loss(t *testing.T) lease.Loss {
	t.Helper()
	select {
	case l, ok := <-f.keeper.Lost():
		if !ok {
			t.Fatal("Lost closed")
		}
		return l
	case <-time.After(waitFor):
		t.Fatal("no loss reported")
	}
	return lease.Loss{}
}

// noLoss asserts that the keeper has reported no loss.
func (f *keeperFixture) noLoss(t *testing.T) {
	t.Helper()
	select {
	case l := <-f.keeper.Lost():
		t.Fatalf("lost %q: %v", l.Lease.Key, l.Err)
	default:
	}
}

// TestKeeper runs the tests of Keeper, each on a database of its own, on
// one server.
func TestKeeper(t *testing.T) {
	srv := pgtest.Start(t)
	for _, tt := range []struct {
		name string
		test func(t *testing.T, srv *pgtest.Server)
	}{
		{"RenewsItsLeases", testKeeperRenewsItsLeases},
		{"ReportsATakeoverAfterAPause", testKeeperReportsATakeoverAfterAPause},
		{"GivesUpLeasesNotRenewedInTime", testKeeperGivesUpLeasesNotRenewedInTime},
		{"DeliversEveryLossToASlowReader", testKeeperDeliversEveryLossToASlowReader},
		{"ReportsAnEndedTenureItTakesAgain", testKeeperReportsAnEndedTenureItTakesAgain},
		{"ReleaseHandsKeysOver", testKeeperReleaseHandsKeysOver},
		{"StopsWithItsContext", testKeeperStopsWithItsContext},
		{"BoundsItsLeases", testKeeperBoundsItsLeases},
		{"HoldsOnlyALiveTenure", testKeeperHoldsOnlyALiveTenure},
		{"TellsItsMetrics", testKeeperTellsItsMetrics},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.test(t, srv)
		})
	}
}

// testKeeperRenewsItsLeases lets a renewal fall due: every lease is
// renewed, in the database and in Held, and none is lost.
func testKeeperRenewsItsLeases(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	f := startKeeper(t, srv, lease.KeeperOptions{TTL: time.Minute})
	var acquired []lease.Lease
	for _, key := range []string{"c1", "c2"} {
		l, err := f.keeper.Acquire(t.Context(), key)
		is.NoErr(err)
		is.Equal(l.TTL, time.Minute)
		acquired = append(acquired, l)
	}
	for round := range 3 {
		f.advance(t, f.interval())
		poll.For(t, fmt.Sprintf("renewal %d", round+1), waitFor, func() bool {
			held := f.keeper.Held()
			return len(held) == 2 && held[1].RenewedAt.After(acquired[1].RenewedAt) && held[0].RenewedAt.After(acquired[0].RenewedAt)
		})
		held := f.keeper.Held()
		for i, l := range held {
			s, err := f.table.Get(t.Context(), l.Key)
			is.NoErr(err)
			is.True(s.RenewedAt.Equal(l.RenewedAt)) // what the database says
			is.True(s.ExpiresAt.After(acquired[i].ExpiresAt))
			is.Equal(l.Epoch, acquired[i].Epoch) // the same tenure
		}
		acquired = held
	}
	f.noLoss(t)
}

// testKeeperReportsATakeoverAfterAPause pauses the keeper (its clock
// stops, as a stopped process's renewals do) until another owner takes
// its key: on waking, its renewal finds the lease lost and reports it, and
// the fence refuses its epoch.
func testKeeperReportsATakeoverAfterAPause(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	f := startKeeper(t, srv, lease.KeeperOptions{TTL: 300 * time.Millisecond})
	old, err := f.keeper.Acquire(t.Context(), "conn")
	is.NoErr(err)

	taken := takeOver(t, f.table, "conn", "node-b", time.Minute) // once the paused lease expires
	is.Equal(taken.Epoch, old.Epoch+1)
	f.noLoss(t) // paused: it has not noticed

	f.advance(t, f.interval()) // it wakes, before its own deadline, and renews
	loss := f.loss(t)
	is.Equal(loss.Lease, old)
	is.True(errors.Is(loss.Err, lease.ErrLost))
	is.Equal(len(f.keeper.Held()), 0)
	is.True(errors.Is(f.table.Check(t.Context(), "conn", old.Epoch), lease.ErrStale)) // its messages are fenced off
}

// testKeeperGivesUpLeasesNotRenewedInTime moves the keeper's clock past
// a lease's deadline before any renewal: it gives the lease up on its own
// clock, before the database's expiry, without asking the database.
func testKeeperGivesUpLeasesNotRenewedInTime(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	f := startKeeper(t, srv, lease.KeeperOptions{TTL: time.Minute})
	old, err := f.keeper.Acquire(t.Context(), "conn")
	is.NoErr(err)
	f.advance(t, f.ttl-f.ttl/5) // as a node cut off from the database would see it
	loss := f.loss(t)
	is.Equal(loss.Lease, old)
	is.True(errors.Is(loss.Err, lease.ErrLost))
	s, err := f.table.Get(t.Context(), "conn")
	is.NoErr(err)
	is.True(s.Live)                           // before the database's expiry
	is.True(s.RenewedAt.Equal(old.RenewedAt)) // never renewed
	is.Equal(len(f.keeper.Held()), 0)
}

// testKeeperDeliversEveryLossToASlowReader loses five leases at once with
// room for one loss on Lost: all five arrive, one by one.
func testKeeperDeliversEveryLossToASlowReader(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	f := startKeeper(t, srv, lease.KeeperOptions{TTL: 300 * time.Millisecond, LostBuffer: 1})
	var keys []string
	for i := range 5 {
		key := fmt.Sprintf("c%d", i)
		_, err := f.keeper.Acquire(t.Context(), key)
		is.NoErr(err)
		keys = append(keys, key)
	}
	for _, key := range keys {
		takeOver(t, f.table, key, "node-b", time.Minute)
	}
	f.advance(t, f.interval())
	var lost []string
	for range keys {
		lost = append(lost, f.loss(t).Lease.Key)
	}
	slices.Sort(lost)
	is.Equal(lost, keys) // each once
	f.noLoss(t)
}

// testKeeperReportsAnEndedTenureItTakesAgain lets a held lease expire
// unnoticed and acquires its key again: the new tenure is held, and the
// old one is reported lost.
func testKeeperReportsAnEndedTenureItTakesAgain(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	f := startKeeper(t, srv, lease.KeeperOptions{TTL: 300 * time.Millisecond})
	old, err := f.keeper.Acquire(t.Context(), "conn")
	is.NoErr(err)
	awaitExpiry(t, f.table, "conn")
	again, err := f.keeper.Acquire(t.Context(), "conn")
	is.NoErr(err)
	is.Equal(again.Epoch, old.Epoch+1)
	loss := f.loss(t)
	is.Equal(loss.Lease, old) // what the old tenure guarded must stop
	is.Equal(f.keeper.Held(), []lease.Lease{again})
}

// testKeeperReleaseHandsKeysOver releases one lease, then all: another
// owner takes each key at once.
func testKeeperReleaseHandsKeysOver(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	f := startKeeper(t, srv, lease.KeeperOptions{})
	for _, key := range []string{"c1", "c2", "c3"} {
		_, err := f.keeper.Acquire(ctx, key)
		is.NoErr(err)
	}
	is.NoErr(f.keeper.Release(ctx, "c1"))
	_, err := f.table.Acquire(ctx, "c1", "node-b", time.Minute)
	is.NoErr(err)                              // at once, not after the ttl
	is.NoErr(f.keeper.Release(ctx, "c1"))      // released twice: no error
	is.NoErr(f.keeper.Release(ctx, "unknown")) // never held: no error

	is.NoErr(f.keeper.ReleaseAll(ctx))
	is.Equal(len(f.keeper.Held()), 0)
	for _, key := range []string{"c2", "c3"} {
		_, err := f.table.Acquire(ctx, key, "node-b", time.Minute)
		is.NoErr(err)
	}
	f.noLoss(t) // released, not lost
}

// testKeeperStopsWithItsContext ends Run: Lost closes, and the keeper
// takes no more leases.
func testKeeperStopsWithItsContext(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	f := startKeeper(t, srv, lease.KeeperOptions{})
	_, err := f.keeper.Acquire(t.Context(), "conn")
	is.NoErr(err)
	is.NoErr(f.stop()) // Run returns nil
	select {
	case _, ok := <-f.keeper.Lost():
		is.True(!ok) // closed
	case <-time.After(waitFor):
		t.Fatal("Lost not closed")
	}
	_, err = f.keeper.Acquire(t.Context(), "other")
	is.True(errors.Is(err, lease.ErrStopped))
	is.True(f.keeper.Run(t.Context()) != nil) // runs once
}

// testKeeperBoundsItsLeases fills a keeper of two: a third key is refused,
// and a key it holds can still be renewed.
func testKeeperBoundsItsLeases(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	f := startKeeper(t, srv, lease.KeeperOptions{MaxLeases: 2})
	for _, key := range []string{"c1", "c2"} {
		_, err := f.keeper.Acquire(ctx, key)
		is.NoErr(err)
	}
	_, err := f.keeper.Acquire(ctx, "c3")
	is.True(err != nil) // full
	_, err = f.table.Get(ctx, "c3")
	is.True(errors.Is(err, lease.ErrNotFound)) // and not taken
	_, err = f.keeper.Acquire(ctx, "c2")
	is.NoErr(err) // held already
}

// TestNewKeeperRefusesWhatCannotKeepALease asks for keepers with no owner,
// a ttl too short to renew within, or negative bounds.
func TestNewKeeperRefusesWhatCannotKeepALease(t *testing.T) {
	is := is.New(t)
	for _, tt := range []struct {
		owner string
		opts  lease.KeeperOptions
	}{
		{"", lease.KeeperOptions{}},
		{"node-a", lease.KeeperOptions{TTL: time.Millisecond}},
		{"node-a", lease.KeeperOptions{MaxLeases: -1}},
		{"node-a", lease.KeeperOptions{LostBuffer: -1}},
	} {
		_, err := lease.NewKeeper(nil, tt.owner, tt.opts)
		is.True(err != nil) // refused
	}
	k, err := lease.NewKeeper(nil, "node-a", lease.KeeperOptions{})
	is.NoErr(err)
	is.Equal(cap(k.Lost()), lease.DefaultLostBuffer) // the defaults
}
