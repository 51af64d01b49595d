package node

import (
	"context"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/cluster/lease"
	"github.com/mcpflow/mcpflow/actors/cluster/membership"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/actors/wire/wiretest"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

const patience = 20 * time.Second

// startNode starts node id on dsn's database with a one-second ttl, on an
// engine of its own; it leaves the cluster when the test ends, unless
// the test made it die first.
func startNode(t *testing.T, dsn, id string) *Node {
	t.Helper()
	is := is.New(t)
	st, err := postgres.Open(t.Context(), dsn, postgres.WithNode(id))
	is.NoErr(err)
	t.Cleanup(func() { is.NoErr(st.Close()) })
	e := wiretest.Engine(t)
	n, err := Start(t.Context(), Options{Config: config.Cluster{NodeID: id, Listen: e.Address(), LeaseTTLMS: 1000}, Pool: st.Pool(), Engine: e})
	is.NoErr(err) // the node joins
	t.Cleanup(func() {
		if n.ctx.Err() == nil {
			ctx, cancel := context.WithTimeout(context.Background(), patience)
			defer cancel()
			is.NoErr(n.Stop(ctx)) // the node leaves
		}
	})
	return n
}

// die ends n as a killed node would: nothing is released, it just stops
// renewing and answering.
func (n *Node) die() {
	n.cancel()
	n.cluster.Stop()
	n.wg.Wait()
}

func TestADeadMembersRunsAreRecoveredOnceAndItsDepartureToldToTheSupervisor(t *testing.T) {
	is := is.New(t)
	dsn := pgtest.Start(t).NewDatabase(t) + pgtest.SynchronousCommit
	a, b := startNode(t, dsn, "a"), startNode(t, dsn, "b")
	poll.For(t, "a sees b", patience, func() bool { return len(a.Cluster().Members()) >= 2 })
	is.Equal(len(a.Cluster().Members()), 2) // a sees b

	told := make(chan any, 8)
	sup := a.engine.SpawnFunc(func(c *actor.Context) {
		if m, ok := c.Message().(supervisor.NodeLeft); ok {
			told <- m
		}
	}, "supervisor", actor.WithID("test"))
	recovered := make(chan string, 8)
	a.Attach(sup, func(_ context.Context, dead string) (int, error) {
		recovered <- dead
		return 3, nil
	})

	b.die()
	select {
	case m := <-told:
		is.Equal(m, supervisor.NodeLeft{Node: "b"}) // the supervisor is told b left
	case <-time.After(patience):
		t.Fatalf("the supervisor was not told within %s that b left", patience)
	}
	select {
	case dead := <-recovered:
		is.Equal(dead, "b") // b's runs are recovered
	case <-time.After(patience):
		t.Fatalf("b's runs were not recovered within %s", patience)
	}
	select {
	case again := <-recovered:
		t.Fatalf("b's runs recovered twice (%s)", again)
	case <-time.After(2 * time.Second): // four reaper rounds at a 1 s ttl
	}
}

func TestANodeStartingWhileAnotherRecoversItsRunsWaitsForItsLease(t *testing.T) {
	is := is.New(t)
	dsn := pgtest.Start(t).NewDatabase(t) + pgtest.SynchronousCommit
	st, err := postgres.Open(t.Context(), dsn)
	is.NoErr(err)
	t.Cleanup(func() { is.NoErr(st.Close()) })
	table, err := lease.New(t.Context(), st.Pool())
	is.NoErr(err)
	held, err := table.Acquire(t.Context(), membership.NodeKey("b"), "a", time.Second) // a recovers b's runs
	is.NoErr(err)

	b := startNode(t, dsn, "b") // b restarts meanwhile
	got, err := table.Get(t.Context(), membership.NodeKey("b"))
	is.NoErr(err)
	is.Equal(got.Owner, "b") // b has its lease back
	is.True(got.Epoch > held.Epoch)
	is.Equal(b.ID(), "b")
}
