package lease_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/cluster/lease"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
)

// TestTable runs the tests of Table, each on a database of its own, on
// one server.
func TestTable(t *testing.T) {
	srv := pgtest.Start(t)
	for _, tt := range []struct {
		name string
		test func(t *testing.T, srv *pgtest.Server)
	}{
		{"AcquireGivesAFreeKey", testAcquireGivesAFreeKey},
		{"OneOwnerWinsEachEpoch", testOneOwnerWinsEachEpoch},
		{"OwnerRenewsByAcquiring", testOwnerRenewsByAcquiring},
		{"TakeoverAfterExpiry", testTakeoverAfterExpiry},
		{"ExpiredLeaseStaysLost", testExpiredLeaseStaysLost},
		{"ReleaseFreesTheKey", testReleaseFreesTheKey},
		{"CheckFencesStaleEpochs", testCheckFencesStaleEpochs},
		{"RenewAllAndReleaseAll", testRenewAllAndReleaseAll},
		{"ListInKeyOrder", testListInKeyOrder},
		{"RefusesEmptyKeysAndTTLs", testRefusesEmptyKeysAndTTLs},
		{"NewRefusesAsynchronousCommits", testNewRefusesAsynchronousCommits},
		{"HeldQueryFindsALiveLeaseOfItsOwner", testHeldQueryFindsALiveLeaseOfItsOwner},
		{"HeldQueryKeepsTheKeyUntilCommit", testHeldQueryKeepsTheKeyUntilCommit},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.test(t, srv)
		})
	}
}

// testAcquireGivesAFreeKey takes a key nobody had: epoch 1, for the ttl
// from the database's time.
func testAcquireGivesAFreeKey(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	table, _ := openTable(t, srv, "")
	l, err := table.Acquire(t.Context(), "conn-1", "node-a", time.Minute)
	is.NoErr(err)
	is.Equal(l.Key, "conn-1")
	is.Equal(l.Owner, "node-a")
	is.Equal(l.Epoch, int64(1))
	is.Equal(l.TTL, time.Minute)
	is.True(l.ExpiresAt.Sub(l.RenewedAt) >= time.Minute) // ttl past the grant
	is.True(l.ExpiresAt.Sub(l.RenewedAt) < time.Minute+time.Second)

	s, err := table.Get(t.Context(), "conn-1")
	is.NoErr(err)
	is.Equal(s.Owner, "node-a")
	is.Equal(s.Epoch, int64(1))
	is.True(s.ExpiresAt.Equal(l.ExpiresAt))
	is.True(s.Live)
	is.True(s.Remaining > 0 && s.Remaining <= time.Minute)

	_, err = table.Get(t.Context(), "conn-2")
	is.True(errors.Is(err, lease.ErrNotFound)) // never leased
}

// testOneOwnerWinsEachEpoch races 16 owners for one key, round after
// round: in each exactly one wins, with the next epoch, and every other
// is told who holds it.
func testOneOwnerWinsEachEpoch(t *testing.T, srv *pgtest.Server) {
	const owners, rounds = 16, 12
	is := is.New(t)
	table, _ := openTable(t, srv, fmt.Sprintf(" pool_max_conns=%d", owners))
	for round := 1; round <= rounds; round++ {
		leases := make([]lease.Lease, owners)
		errs := make([]error, owners)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range owners {
			wg.Go(func() {
				<-start
				leases[i], errs[i] = table.Acquire(t.Context(), "conn", fmt.Sprintf("node-%02d", i), time.Minute)
			})
		}
		close(start)
		wg.Wait()

		var winners []lease.Lease
		for _, l := range leases {
			if l.Epoch != 0 {
				winners = append(winners, l)
			}
		}
		is.Equal(len(winners), 1) // exactly one owner per epoch
		winner := winners[0]
		is.Equal(winner.Epoch, int64(round)) // each tenure the next epoch
		for i, err := range errs {
			if leases[i].Epoch != 0 {
				is.NoErr(err)
				continue
			}
			var held *lease.HeldError
			is.True(errors.As(err, &held)) // the losers are told
			is.True(errors.Is(err, lease.ErrHeld))
			is.Equal(held.Owner, winner.Owner) // who holds it
			is.Equal(held.Epoch, winner.Epoch)
			is.True(held.ExpiresAt.Equal(winner.ExpiresAt)) // and until when
		}
		is.NoErr(table.Release(t.Context(), winner)) // the next round races for a free key
	}
}

// testOwnerRenewsByAcquiring acquires a key its owner holds: the tenure
// goes on, with its epoch, and its expiry does not move back.
func testOwnerRenewsByAcquiring(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	table, _ := openTable(t, srv, "")
	first, err := table.Acquire(t.Context(), "conn", "node-a", time.Hour)
	is.NoErr(err)
	again, err := table.Acquire(t.Context(), "conn", "node-a", time.Minute)
	is.NoErr(err)
	is.Equal(again.Epoch, first.Epoch)                // the same tenure
	is.True(!again.ExpiresAt.Before(first.ExpiresAt)) // a shorter ttl does not cut it
	is.True(again.RenewedAt.After(first.RenewedAt))   // renewed
	_, err = table.Acquire(t.Context(), "conn", "node-b", time.Minute)
	is.True(errors.Is(err, lease.ErrHeld)) // still node-a's
}

// testTakeoverAfterExpiry lets a lease expire: another owner takes the key
// with a greater epoch, no sooner than the expiry by the database's clock,
// and the old owner can neither renew nor release it.
func testTakeoverAfterExpiry(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	table, _ := openTable(t, srv, "")
	old, err := table.Acquire(ctx, "conn", "node-a", 200*time.Millisecond)
	is.NoErr(err)
	taken := takeOver(t, table, "conn", "node-b", time.Minute)
	is.Equal(taken.Epoch, old.Epoch+1)              // a greater epoch
	is.True(!taken.RenewedAt.Before(old.ExpiresAt)) // not before the old lease ended

	_, err = table.Renew(ctx, old)
	is.True(errors.Is(err, lease.ErrLost))                     // the old owner cannot renew
	is.True(errors.Is(table.Release(ctx, old), lease.ErrLost)) // nor release
	_, err = table.Acquire(ctx, "conn", "node-a", time.Minute)
	is.True(errors.Is(err, lease.ErrHeld)) // nor take it back

	renewed, err := table.Renew(ctx, taken)
	is.NoErr(err)
	is.Equal(renewed.Epoch, taken.Epoch) // the new owner renews its tenure
	is.True(renewed.ExpiresAt.After(taken.ExpiresAt))
}

// testExpiredLeaseStaysLost lets a lease expire with nobody taking it:
// it cannot be renewed, and its owner taking it again starts a new tenure.
func testExpiredLeaseStaysLost(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	table, _ := openTable(t, srv, "")
	old, err := table.Acquire(ctx, "conn", "node-a", time.Millisecond)
	is.NoErr(err)
	awaitExpiry(t, table, "conn")
	_, err = table.Renew(ctx, old)
	is.True(errors.Is(err, lease.ErrLost)) // an ended tenure does not come back
	again, err := table.Acquire(ctx, "conn", "node-a", time.Minute)
	is.NoErr(err)
	is.Equal(again.Epoch, old.Epoch+1) // a new tenure, though of the same owner
}

// testReleaseFreesTheKey releases a lease: another owner takes the key at
// once, and a second release is refused.
func testReleaseFreesTheKey(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	table, _ := openTable(t, srv, "")
	l, err := table.Acquire(ctx, "conn", "node-a", time.Hour)
	is.NoErr(err)
	is.NoErr(table.Release(ctx, l))
	s, err := table.Get(ctx, "conn")
	is.NoErr(err)
	is.True(!s.Live) // ended now, not in an hour
	is.Equal(s.Remaining, time.Duration(0))

	next, err := table.Acquire(ctx, "conn", "node-b", time.Minute)
	is.NoErr(err) // at once
	is.Equal(next.Epoch, l.Epoch+1)
	is.True(errors.Is(table.Release(ctx, l), lease.ErrLost)) // not twice
	_, err = table.Renew(ctx, l)
	is.True(errors.Is(err, lease.ErrLost))
}

// testCheckFencesStaleEpochs checks epochs against a key that changed
// hands: the old epoch is stale, the current one passes, and one never
// granted is unknown.
func testCheckFencesStaleEpochs(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	table, _ := openTable(t, srv, "")
	old, err := table.Acquire(ctx, "conn", "node-a", time.Hour)
	is.NoErr(err)
	is.NoErr(table.Check(ctx, "conn", old.Epoch)) // the owner's messages pass
	is.NoErr(table.Release(ctx, old))
	is.NoErr(table.Check(ctx, "conn", old.Epoch)) // released, but nobody newer to fence it from

	next, err := table.Acquire(ctx, "conn", "node-b", time.Hour)
	is.NoErr(err)
	err = table.Check(ctx, "conn", old.Epoch)
	is.True(errors.Is(err, lease.ErrStale)) // the stale owner's messages are refused
	is.NoErr(table.Check(ctx, "conn", next.Epoch))
	is.True(errors.Is(table.Check(ctx, "conn", next.Epoch+1), lease.ErrNotFound)) // an epoch from nowhere
	is.True(errors.Is(table.Check(ctx, "other", 1), lease.ErrNotFound))           // a key never leased
}

// testRenewAllAndReleaseAll renews and releases several leases in one
// statement each, one of them lost meanwhile.
func testRenewAllAndReleaseAll(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	table, _ := openTable(t, srv, "")
	var held []lease.Lease
	for _, key := range []string{"c1", "c2", "c3", "c4"} {
		l, err := table.Acquire(ctx, key, "node-a", time.Hour)
		is.NoErr(err)
		held = append(held, l)
	}
	is.NoErr(table.Release(ctx, held[2]))
	taken, err := table.Acquire(ctx, "c3", "node-b", time.Hour)
	is.NoErr(err)

	renewed, lost, err := table.RenewAll(ctx, held)
	is.NoErr(err)
	is.Equal(len(renewed), 3)
	is.Equal([]string{renewed[0].Key, renewed[1].Key, renewed[2].Key}, []string{"c1", "c2", "c4"}) // in order
	is.Equal(len(lost), 1)
	is.Equal(lost[0], held[2]) // the one another owner took
	for i, l := range renewed {
		is.True(l.RenewedAt.After(held[[]int{0, 1, 3}[i]].RenewedAt))
	}

	n, err := table.ReleaseAll(ctx, append(renewed, held[2]))
	is.NoErr(err)
	is.Equal(n, 3) // not node-b's
	list, err := table.List(ctx)
	is.NoErr(err)
	for _, s := range list {
		is.Equal(s.Live, s.Key == "c3") // only the lease another owner holds is left
	}
	is.NoErr(table.Check(ctx, "c3", taken.Epoch))
}

// testListInKeyOrder lists leases on a database whose default collation
// is ICU's: keys come in the order of their bytes.
func testListInKeyOrder(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	table, _ := openTable(t, srv, "")
	for _, key := range []string{"b", "B", "a"} {
		_, err := table.Acquire(ctx, key, "node-"+key, time.Hour)
		is.NoErr(err)
	}
	l, err := table.Acquire(ctx, "c", "node-c", time.Hour)
	is.NoErr(err)
	is.NoErr(table.Release(ctx, l))

	list, err := table.List(ctx)
	is.NoErr(err)
	var keys []string
	for _, s := range list {
		keys = append(keys, s.Key)
		is.Equal(s.Owner, "node-"+s.Key)
		is.Equal(s.Live, s.Key != "c") // released leases are listed, not live
	}
	is.Equal(keys, []string{"B", "a", "b", "c"})
}

// testRefusesEmptyKeysAndTTLs asks for leases no row can hold.
func testRefusesEmptyKeysAndTTLs(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	table, _ := openTable(t, srv, "")
	for _, tt := range []struct {
		key, owner string
		ttl        time.Duration
	}{{"", "node-a", time.Second}, {"conn", "", time.Second}, {"conn", "node-a", 0}, {"conn", "node-a", time.Nanosecond}} {
		_, err := table.Acquire(ctx, tt.key, tt.owner, tt.ttl)
		is.True(err != nil)
		_, err = table.Renew(ctx, lease.Lease{Key: tt.key, Owner: tt.owner, Epoch: 1, TTL: tt.ttl})
		is.True(err != nil)
	}
	list, err := table.List(ctx)
	is.NoErr(err)
	is.Equal(len(list), 0) // nothing was written
}

// testNewRefusesAsynchronousCommits opens the table on connections whose
// commits do not wait for the disk, and on a database without the table.
func testNewRefusesAsynchronousCommits(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	s, err := postgres.Open(ctx, srv.NewDatabase(t)+" synchronous_commit=off")
	is.NoErr(err)
	defer s.Close()
	_, err = lease.New(ctx, s.Pool())
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "synchronous_commit")) // says why

	pool, err := pgxpool.New(ctx, srv.NewDatabase(t)+pgtest.SynchronousCommit)
	is.NoErr(err)
	defer pool.Close()
	_, err = lease.New(ctx, pool)
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "postgres store")) // says what creates it
}
