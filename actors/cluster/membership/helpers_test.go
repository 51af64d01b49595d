package membership_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/anthdm/hollywood/cluster"
	"github.com/anthdm/hollywood/remote"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/cluster/lease"
	"github.com/mcpflow/mcpflow/actors/cluster/membership"
	"github.com/mcpflow/mcpflow/actors/guard"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
	"github.com/mcpflow/mcpflow/actors/wire"
)

// waitFor bounds every wait of these tests.
const waitFor = 20 * time.Second

// interval is how often the tests' providers read the members.
const interval = 50 * time.Millisecond

// discard is a logger that writes nothing.
var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// openDatabase opens the postgres store, whose migrations create the
// leases and cluster_members tables, on a new database of srv, and
// returns its leases table and members registry; it is closed when tb
// ends.
func openDatabase(tb testing.TB, srv *pgtest.Server) (*lease.Table, *membership.Registry) {
	tb.Helper()
	s, err := postgres.Open(tb.Context(), srv.NewDatabase(tb)+pgtest.SynchronousCommit)
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
	return table, membership.NewRegistry(s.Pool())
}

// within runs f, failing t unless it returns within waitFor.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(waitFor):
		t.Errorf("%s: not within %s", what, waitFor)
	}
}

// freeAddress is a loopback address with a port free a moment ago.
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// node is one hollywood cluster node of a test.
type node struct {
	cluster *cluster.Cluster
	// events has the member events of the node's engine, in order.
	events chan any
}

// eventsOf is the actor that keeps the member events of node id in its
// events.
type eventsOf struct {
	t    *testing.T
	id   string
	node *node
}

func (a eventsOf) Receive(c *actor.Context) {
	switch c.Message().(type) {
	case cluster.MemberJoinEvent, cluster.MemberLeaveEvent:
		select {
		case a.node.events <- c.Message():
		default:
			a.t.Errorf("node %s: more member events than the test reads", a.id)
		}
	}
}

// startNode starts the cluster node id on engine, with the provider of
// source and the kind "echo"; it stops when t ends.
func startNode(t *testing.T, id string, engine *actor.Engine, source membership.Source, opts membership.ProviderOptions) *node {
	t.Helper()
	n := &node{events: make(chan any, 256)}
	sub := engine.Spawn(guard.Producer(func() actor.Receiver { return eventsOf{t, id, n} }, nil), "member-events")
	engine.Subscribe(sub)

	opts.Interval = interval
	if opts.Logger == nil {
		opts.Logger = discard
	}
	c, err := cluster.New(cluster.NewConfig().WithID(id).WithEngine(engine).WithRegion("test").
		WithProvider(membership.NewProvider(source, opts)))
	if err != nil {
		t.Fatal(err)
	}
	c.RegisterKind("echo", func() actor.Receiver { return echo{} }, cluster.NewKindConfig())
	c.Start()
	n.cluster = c
	t.Cleanup(func() {
		engine.Unsubscribe(sub) // before it stops: a stopped subscriber makes the event stream spin
		within(t, "node "+id+" stops", func() {
			c.Stop()
			<-engine.Poison(sub).Done()
		})
	})
	return n
}

// remoteEngine starts an engine whose remote listens on addr; the remote
// stops when t ends.
func remoteEngine(t *testing.T, addr string) *actor.Engine {
	t.Helper()
	r := wire.NewRemote(addr, remote.NewConfig())
	e, err := actor.NewEngine(actor.NewEngineConfig().WithRemote(r))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { within(t, "the remote of "+addr+" stops", func() { r.Stop().Wait() }) })
	return e
}

// echo is the kind the test nodes register.
type echo struct{}

func (echo) Receive(*actor.Context) {}

// await waits for a member event of the node that matches: a join (or a
// leave) of member id, and returns the member.
func (n *node) await(t *testing.T, join bool, id string) *cluster.Member {
	t.Helper()
	timeout := time.After(waitFor)
	for {
		select {
		case e := <-n.events:
			switch e := e.(type) {
			case cluster.MemberJoinEvent:
				if join && e.Member.ID == id {
					return e.Member
				}
			case cluster.MemberLeaveEvent:
				if !join && e.Member.ID == id {
					return e.Member
				}
			}
		case <-timeout:
			t.Fatalf("%s: no member event of %s (join %t) within %s", n.cluster.ID(), id, join, waitFor)
			return nil
		}
	}
}

// memberIDs are the ids of the members the node's agent holds, sorted.
func (n *node) memberIDs() []string {
	var ids []string
	for _, m := range n.cluster.Members() {
		ids = append(ids, m.ID)
	}
	slices.Sort(ids)
	return ids
}

// runKeeper runs a lease keeper of owner on table until t ends.
func runKeeper(t *testing.T, table *lease.Table, owner string) *lease.Keeper {
	t.Helper()
	k, err := lease.NewKeeper(table, owner, lease.KeeperOptions{Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			is.New(t).NoErr(err) // Run ends well
		case <-time.After(waitFor):
			t.Errorf("the keeper of %s did not stop within %s", owner, waitFor)
		}
	})
	return k
}
