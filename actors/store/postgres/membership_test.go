package postgres_test

import (
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/cluster/lease"
	"github.com/mcpflow/mcpflow/actors/cluster/membership"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
)

// memberOf opens node's store fenced on its membership, as a cluster
// node's is.
func memberOf(t *testing.T, dsn, node string) *postgres.Store {
	return open(t, dsn, postgres.WithNode(node),
		postgres.WithMembership(postgres.Membership{Key: membership.NodeKey(node), Held: lease.HeldQuery}))
}

// testMembershipFence has node a create and resume runs while it holds
// its membership lease, and while it does not: when the lease was never
// taken, has expired, or is another node's (a survivor that claims a's
// runs), the store refuses with store.ErrNotMember and writes nothing;
// once a takes its lease again, the same run is created. A run a is
// running already it commits whatever its lease: the row's node fences
// it (testFence).
func testMembershipFence(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	dsn := srv.NewDatabase(t) + pgtest.SynchronousCommit // as the leases need
	a := memberOf(t, dsn, "a")
	table, err := lease.New(ctx, a.Pool())
	is.NoErr(err)
	key := membership.NodeKey("a")
	refused := func(err error) {
		t.Helper()
		is.True(errors.Is(err, store.ErrNotMember)) // the membership lapsed
		is.True(!errors.Is(err, store.ErrExists))   // said as such
	}
	absent := func(id string) {
		t.Helper()
		_, err := a.GetRun(ctx, id)
		is.True(errors.Is(err, store.ErrNotFound)) // nothing written
		is.Equal(len(query[int](t, dsn, `SELECT 1 FROM run_events WHERE run_id = '`+id+`'`)), 0)
	}

	refused(a.CreateRun(ctx, clusterRun("never", store.RunRunning), nil)) // a never took its lease
	absent("never")

	held, err := table.Acquire(ctx, key, "a", time.Minute)
	is.NoErr(err)
	paused := clusterRun("paused", store.RunRunning)
	is.NoErr(a.CreateRun(ctx, paused, nil)) // a member creates
	paused, entries := step(paused, store.RunInterrupted)
	is.NoErr(a.RecordProgress(ctx, paused, entries))
	running := clusterRun("running", store.RunRunning)
	is.NoErr(a.CreateRun(ctx, running, nil))
	is.NoErr(a.CreateRun(ctx, clusterRun("never", store.RunRunning), nil)) // the run refused before
	is.True(errors.Is(a.CreateRun(ctx, running, nil), store.ErrExists))    // a taken id is still ErrExists

	is.NoErr(table.Release(ctx, held)) // a's lease ends, as when it expires
	refused(a.CreateRun(ctx, clusterRun("lapsed", store.RunRunning), nil))
	absent("lapsed")
	resumed, entries := step(paused, store.RunRunning)
	refused(a.RecordProgress(ctx, resumed, entries)) // nor does it take an interrupted run to run
	got, err := a.GetRun(ctx, "paused")
	is.NoErr(err)
	is.Equal(got.Status, store.RunInterrupted)
	cancelled, entries := step(paused, store.RunCancelled)
	is.NoErr(a.RecordProgress(ctx, cancelled, entries)) // a cancel runs nothing: allowed
	running, entries = step(running, store.RunRunning)
	is.NoErr(a.RecordProgress(ctx, running, entries)) // its own running run: the row's node fences it, not the lease

	survivor, err := table.Acquire(ctx, key, "b", time.Minute) // b takes a's lease to claim its runs
	is.NoErr(err)
	refused(a.CreateRun(ctx, clusterRun("lapsed", store.RunRunning), nil))
	absent("lapsed")
	is.NoErr(table.Release(ctx, survivor))

	_, err = table.Acquire(ctx, key, "a", time.Minute) // a rejoins
	is.NoErr(err)
	is.NoErr(a.CreateRun(ctx, clusterRun("lapsed", store.RunRunning), nil))
	is.Equal(nodeOf(t, dsn, "lapsed"), "a")
}
