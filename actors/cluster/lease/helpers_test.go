package lease_test

import (
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/cluster/lease"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// waitFor bounds every wait of these tests.
const waitFor = 20 * time.Second

// openTable opens the postgres store, whose migrations create the leases
// table, on a new database of srv, with the DSN parameters params, and
// returns the table on the store's pool; it is closed when tb ends.
func openTable(tb testing.TB, srv *pgtest.Server, params string) (*lease.Table, *pgxpool.Pool) {
	tb.Helper()
	s, err := postgres.Open(tb.Context(), srv.NewDatabase(tb, pgtest.ICUCollation("en-US"))+pgtest.SynchronousCommit+params)
	if err != nil {
		tb.Fatalf("open the store: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
	})
	table, err := lease.New(tb.Context(), s.Pool())
	if err != nil {
		tb.Fatalf("open the leases: %v", err)
	}
	return table, s.Pool()
}

// takeOver acquires key for owner as soon as its lease expires, polling.
func takeOver(t *testing.T, table *lease.Table, key, owner string, ttl time.Duration) lease.Lease {
	t.Helper()
	is := is.New(t)
	var l lease.Lease
	poll.For(t, owner+" takes "+key, waitFor, func() bool {
		var err error
		l, err = table.Acquire(t.Context(), key, owner, ttl)
		if err != nil {
			is.True(errors.Is(err, lease.ErrHeld)) // the only refusal while the lease lives
		}
		return err == nil
	})
	return l
}

// awaitExpiry polls until key's lease has expired by the database's clock.
func awaitExpiry(t *testing.T, table *lease.Table, key string) {
	t.Helper()
	is := is.New(t)
	poll.For(t, "the lease of "+key+" expires", waitFor, func() bool {
		s, err := table.Get(t.Context(), key)
		is.NoErr(err)
		return !s.Live
	})
}
