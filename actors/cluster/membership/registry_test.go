package membership_test

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/cluster/membership"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
)

// TestRegistry registers three nodes, of which one holds its node lease,
// one released it and one never took it, and reads them back, then the
// leases.
func TestRegistry(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	table, reg := openDatabase(t, pgtest.Start(t))
	a := membership.Member{NodeID: "node-a", ClusterAddress: "10.0.0.1:7000", HTTPAddress: "10.0.0.1:8765"}
	b := membership.Member{NodeID: "node-b", ClusterAddress: "10.0.0.2:7000"}
	c := membership.Member{NodeID: "node-c", ClusterAddress: "10.0.0.3:7000"}
	for _, m := range []membership.Member{c, a, b} {
		is.NoErr(reg.Register(ctx, m))
	}
	is.Equal(membership.NodeKey("node-a"), "node/node-a")
	la, err := table.Acquire(ctx, membership.NodeKey("node-a"), "node-a", time.Minute)
	is.NoErr(err)
	lb, err := table.Acquire(ctx, membership.NodeKey("node-b"), "node-b", time.Minute)
	is.NoErr(err)
	is.NoErr(table.Release(ctx, lb))

	live, err := reg.Live(ctx)
	is.NoErr(err)
	is.Equal(len(live), 1) // node-a alone
	is.Equal(live[0].Member, a)
	is.True(live[0].Live)
	is.Equal(live[0].Epoch, la.Epoch)
	is.True(live[0].Remaining > 0 && live[0].Remaining <= time.Minute) // its time left
	is.True(!live[0].StartedAt.IsZero() && live[0].UpdatedAt.Equal(live[0].StartedAt))

	all, err := reg.All(ctx)
	is.NoErr(err)
	is.Equal(len(all), 3)
	is.Equal([]membership.Member{all[0].Member, all[1].Member, all[2].Member}, []membership.Member{a, b, c}) // by id
	is.True(all[0].Live)
	is.True(!all[1].Live)                              // released
	is.Equal(all[1].Epoch, lb.Epoch)                   // the tenure it had
	is.Equal(all[1].Remaining, time.Duration(0))       // none left
	is.True(!all[2].Live && all[2].Epoch == 0)         // never held one
	is.True(!all[2].StartedAt.After(all[0].StartedAt)) // registered first

	moved := membership.Member{NodeID: "node-a", ClusterAddress: "10.0.0.9:7000"}
	is.NoErr(reg.Register(ctx, moved)) // node-a starts again, elsewhere
	live, err = reg.Live(ctx)
	is.NoErr(err)
	is.Equal(live[0].Member, moved)
	is.True(live[0].StartedAt.After(all[0].StartedAt)) // started again

	withHTTP := moved
	withHTTP.HTTPAddress = "10.0.0.9:8765"
	is.NoErr(reg.Update(ctx, withHTTP)) // it learns its HTTP address
	updated, err := reg.Live(ctx)
	is.NoErr(err)
	is.Equal(updated[0].Member, withHTTP)
	is.True(updated[0].StartedAt.Equal(live[0].StartedAt)) // the same start
	is.True(updated[0].UpdatedAt.After(live[0].UpdatedAt))
	is.True(reg.Update(ctx, membership.Member{NodeID: "node-y", ClusterAddress: "10.0.0.8:7000"}) != nil) // not registered

	_, err = table.Acquire(ctx, membership.NodeKey("node-z"), "node-z", time.Minute)
	is.NoErr(err)
	nodes, err := reg.LiveNodes(ctx, []string{"node-z", "node-b", "node-a", "node-y"})
	is.NoErr(err)
	is.Equal(nodes, []string{"node-a", "node-z"}) // registered or not, by their leases alone

	conn, err := table.Acquire(ctx, "conn.one", "node-a", time.Minute)
	is.NoErr(err)
	for range 2 {
		_, err = table.NextGeneration(ctx, conn)
		is.NoErr(err)
	}
	leases, err := reg.Leases(ctx)
	is.NoErr(err)
	var keys []string
	for _, l := range leases {
		keys = append(keys, l.Key)
	}
	is.Equal(keys, []string{"conn.one", "node/node-a", "node/node-b", "node/node-z"}) // every lease, by key
	is.Equal(leases[0].Owner, "node-a")
	is.Equal(leases[0].Generation, int64(2)) // its sessions' generations
	is.True(leases[0].Live && leases[0].Remaining > 0)
	is.True(!leases[2].Live && leases[2].Remaining == 0) // node-b's, released
	is.Equal(leases[2].Generation, int64(0))

	is.True(reg.Register(ctx, membership.Member{ClusterAddress: "10.0.0.1:7000"}) != nil) // no id
	is.True(reg.Register(ctx, membership.Member{NodeID: "node-a"}) != nil)                // no address
}
