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

// eventually polls cond until it holds, failing t after waitFor.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			t.Logf("not within %s: %s", waitFor, what)
			is.New(t).Fail()
		}
		time.Sleep(2 * time.Millisecond) // polling interval, not a synchronisation: cond decides
	}
}

// takeOver acquires key for owner as soon as its lease expires, polling.
func takeOver(t *testing.T, table *lease.Table, key, owner string, ttl time.Duration) lease.Lease {
	t.Helper()
	is := is.New(t)
	var l lease.Lease
	eventually(t, owner+" takes "+key, func() bool {
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
	eventually(t, "the lease of "+key+" expires", func() bool {
		s, err := table.Get(t.Context(), key)
		is.NoErr(err)
		return !s.Live
	})
}
