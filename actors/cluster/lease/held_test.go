package lease_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/cluster/lease"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// held runs HeldQuery for key and owner in tx and says whether it found
// the lease held.
func held(t *testing.T, tx pgx.Tx, key, owner string) bool {
	t.Helper()
	rows, err := tx.Query(t.Context(), lease.HeldQuery("$1", "$2"), key, owner)
	is.New(t).NoErr(err)
	found := rows.Next()
	rows.Close()
	is.New(t).NoErr(rows.Err())
	return found
}

// inTx runs fn in a transaction of pool that it rolls back.
func inTx(t *testing.T, pool *pgxpool.Pool, fn func(tx pgx.Tx)) {
	t.Helper()
	tx, err := pool.Begin(t.Context())
	is.New(t).NoErr(err)
	defer func() { is.New(t).NoErr(tx.Rollback(context.WithoutCancel(t.Context()))) }()
	fn(tx)
}

// testHeldQueryFindsALiveLeaseOfItsOwner: HeldQuery finds the lease only
// while it is live and its owner's.
func testHeldQueryFindsALiveLeaseOfItsOwner(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	table, pool := openTable(t, srv, "")
	inTx(t, pool, func(tx pgx.Tx) { is.True(!held(t, tx, "node/a", "a")) }) // never leased
	l, err := table.Acquire(t.Context(), "node/a", "a", time.Minute)
	is.NoErr(err)
	inTx(t, pool, func(tx pgx.Tx) {
		is.True(held(t, tx, "node/a", "a"))  // live, a's
		is.True(!held(t, tx, "node/a", "b")) // not b's
	})
	is.NoErr(table.Release(t.Context(), l))
	inTx(t, pool, func(tx pgx.Tx) { is.True(!held(t, tx, "node/a", "a")) }) // ended
}

// testHeldQueryKeepsTheKeyUntilCommit: a transaction that found its
// owner's lease held keeps the key from any other owner until it ends,
// though the lease expires meanwhile: another owner's Acquire waits for
// its commit, so that what it wrote is committed before the key changes
// hands (a node's run is created before a survivor can claim the node's
// runs).
func testHeldQueryKeepsTheKeyUntilCommit(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	table, pool := openTable(t, srv, "")
	tx, err := pool.Begin(ctx)
	is.NoErr(err)
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // after the commit, a no-op
	// A short lease, locked while live: a longer one each time the
	// machine was too slow to lock it before it expired.
	var first lease.Lease
	for ttl := 500 * time.Millisecond; ; ttl *= 2 {
		first, err = table.Acquire(ctx, "node/a", "a", ttl)
		is.NoErr(err)
		if held(t, tx, "node/a", "a") {
			break
		}
		is.True(ttl < waitFor) // the lease locked within the tests' bound
	}
	awaitExpiry(t, table, "node/a")

	taken := make(chan error, 1)
	var second lease.Lease
	go func() {
		var err error
		second, err = table.Acquire(ctx, "node/a", "b", time.Minute)
		taken <- err
	}()
	poll.For(t, "b's acquire waits for a lock", waitFor, func() bool {
		var waiting int
		is.NoErr(pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO leases%'`).Scan(&waiting))
		return waiting == 1
	})
	select {
	case err := <-taken:
		t.Fatalf("b took the key while a's transaction held it: %v", err)
	default:
	}
	is.NoErr(tx.Commit(ctx))
	is.NoErr(<-taken) // b takes it once a's transaction has ended
	is.Equal(second.Owner, "b")
	is.Equal(second.Epoch, first.Epoch+1)
}
