package supervisor_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/actors/wire/wiretest"
	"github.com/mcpflow/mcpflow/fakes"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// directory is what the placements of a test's nodes agree on: which node
// owns each connection, and every node's supervisor.
type directory struct {
	mu          sync.Mutex
	owner       map[string]string // connection → node
	supervisors map[string]*actor.PID
	fail        error
	epoch       atomic.Int64
	released    []string
	tenures     []*tenure // every tenure given, in order
}

// placement is one node's view of the directory.
type placement struct {
	dir  *directory
	node string
}

func (p placement) Place(_ context.Context, conn config.Connection, _ bool) (supervisor.Placed, error) {
	d := p.dir
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fail != nil {
		return supervisor.Placed{}, d.fail
	}
	owner := d.owner[conn.ID]
	if owner == p.node {
		t := &tenure{node: p.node, epoch: d.epoch.Add(1)}
		d.tenures = append(d.tenures, t)
		return supervisor.Placed{Tenure: t}, nil
	}
	return supervisor.Placed{Owner: owner, Supervisor: d.supervisors[owner], Until: time.Now().Add(time.Minute)}, nil
}

func (p placement) Release(_ context.Context, id string) error {
	p.dir.mu.Lock()
	defer p.dir.mu.Unlock()
	p.dir.released = append(p.dir.released, p.node+":"+id)
	return nil
}

// tenure is a tenure that holds until it is ended, counting generations.
type tenure struct {
	node  string
	epoch int64
	gen   atomic.Int64
	ended atomic.Bool
}

func (t *tenure) Node() string { return t.node }
func (t *tenure) Epoch() int64 { return t.epoch }
func (t *tenure) Valid() bool  { return !t.ended.Load() }
func (t *tenure) NextGeneration(context.Context) (int64, error) {
	return t.gen.Add(1), nil
}

// clusterNode is a supervisor on an engine of its own, reachable from the
// other nodes of the test through wire.Remote.
type clusterNode struct {
	engine  *actor.Engine
	handle  *supervisor.Handle
	replies *reply.Router
	servers *fakes.Recording
}

func startClusterNode(t *testing.T, dir *directory, id string) *clusterNode {
	t.Helper()
	return startClusterNodeWith(t, dir, id, store.NewMemory())
}

// startClusterNodeWith is startClusterNode with the node's catalogs.
func startClusterNodeWith(t *testing.T, dir *directory, id string, catalogs store.Catalogs) *clusterNode {
	t.Helper()
	is := is.New(t)
	e := wiretest.Engine(t)
	opts := testOptions()
	opts.Placement = placement{dir: dir, node: id}
	n := &clusterNode{engine: e, servers: fakes.NewRecording(fakes.NewInMemory(nil))}
	n.handle = supervisor.Spawn(e, conns(), n.servers, catalogs, opts)
	n.replies = newRouter(t, e)
	dir.mu.Lock()
	dir.supervisors[id] = n.handle.PID()
	dir.mu.Unlock()
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		is.NoErr(n.handle.Stop(c)) // the node's supervisor stops
	})
	return n
}

func (n *clusterNode) call(t *testing.T, connection string) session.ToolResult {
	t.Helper()
	w := reply.Expect[session.ToolResult](n.replies)
	n.engine.Send(n.handle.PID(), session.CallTool{
		Connection: connection, Tool: "counter", Deadline: time.Now().Add(2 * time.Second), Reply: w.To(),
	})
	r, err := w.Wait(ctx(t))
	is.New(t).NoErr(err) // the call is answered
	return r
}

func newDirectory() *directory {
	return &directory{owner: map[string]string{"fake.one": "b", "fake.two": "a"}, supervisors: map[string]*actor.PID{}}
}

func TestACallGoesToTheSessionOfTheNodeThatOwnsItsConnection(t *testing.T) {
	is := is.New(t)
	dir := newDirectory()
	a, b := startClusterNode(t, dir, "a"), startClusterNode(t, dir, "b")

	for i, n := range []*clusterNode{a, b, a, b} {
		r := n.call(t, "fake.one")
		is.NoErr(r.Error.Err())
		is.Equal(fakes.ToolOutput(t, r)["count"], float64(i+1)) // one session counts every node's calls
		is.Equal(r.Node, "b")                                   // on node b, which owns the connection
		is.Equal(r.Generation, int64(1))
	}
	is.Equal(a.servers.SessionsCreated(), 0) // node a opened no session of it
	is.Equal(b.servers.SessionsCreated(), 1)
	is.Equal(a.call(t, "fake.two").Node, "a") // while a owns another connection
}

func TestAnEndedTenureStopsItsSessionAndTheConnectionIsPlacedAgain(t *testing.T) {
	is := is.New(t)
	dir := newDirectory()
	a, b := startClusterNode(t, dir, "a"), startClusterNode(t, dir, "b")
	first := b.call(t, "fake.one")
	is.NoErr(first.Error.Err())

	dir.mu.Lock()
	dir.owner["fake.one"] = "a" // b was cut off: a took the connection over
	dir.mu.Unlock()
	b.engine.Send(b.handle.PID(), supervisor.TenureEnded{Connection: "fake.one", Epoch: first.Epoch})

	// b's session stops, then b places the connection again
	r := poll.Value(t, "b's call placed on a", patience, func() (session.ToolResult, bool) {
		r := b.call(t, "fake.one")
		return r, r.Node == "a"
	})
	is.Equal(r.Node, "a")
	is.True(r.Epoch > first.Epoch)                        // under a later tenure
	is.Equal(fakes.ToolOutput(t, r)["count"], float64(1)) // on a's own, new session
	is.Equal(b.servers.SessionsCreated(), 1)              // b opened none again
	is.Equal(a.call(t, "fake.one").Generation, int64(1))  // the test's tenures count from 1
}

func TestACallFailsUnavailableWhenNoNodeCanBeFoundForItsConnection(t *testing.T) {
	is := is.New(t)
	dir := newDirectory()
	dir.fail = errors.New("the database is unreachable")
	a := startClusterNode(t, dir, "a")

	r := a.call(t, "fake.one")
	is.True(errors.Is(r.Error.Err(), session.ErrUnavailable)) // refused at once, not at its deadline
	is.Equal(a.servers.SessionsCreated(), 0)
}

func TestARemovedConnectionIsReleasedOnceItsSessionStopped(t *testing.T) {
	is := is.New(t)
	dir := newDirectory()
	a := startClusterNode(t, dir, "a")
	is.NoErr(a.call(t, "fake.two").Error.Err())

	_, err := a.handle.Reconcile(ctx(t), conns()[:1])
	is.NoErr(err)
	released := poll.Value(t, "a released connection", patience, func() ([]string, bool) {
		dir.mu.Lock()
		defer dir.mu.Unlock()
		released := append([]string(nil), dir.released...)
		return released, len(released) > 0
	})
	is.Equal(released, []string{"a:fake.two"}) // only the owned connection it removed
}

func TestACallPassedToANodeThatLeavesFailsAsItsSessionWasLost(t *testing.T) {
	is := is.New(t)
	dir := newDirectory()
	a, b := startClusterNode(t, dir, "a"), startClusterNode(t, dir, "b")
	w := reply.Expect[session.ToolResult](a.replies)
	a.engine.Send(a.handle.PID(), session.CallTool{
		Connection: "fake.one", Tool: "sleep", Arguments: fakes.CallArguments(map[string]any{"ms": 60_000}),
		Deadline: time.Now().Add(time.Minute), Reply: w.To(),
	})
	poll.For(t, "the call reaching b", patience, func() bool { return len(b.servers.ToolCalls()) > 0 })
	is.Equal(len(b.servers.ToolCalls()), 1) // the call runs on b

	a.engine.Send(a.handle.PID(), supervisor.NodeLeft{Node: "b"})
	r, err := w.Wait(ctx(t))
	is.NoErr(err)                                             // answered long before its deadline
	is.True(errors.Is(r.Error.Err(), session.ErrSessionLost)) // whether it ran is unknown
}

func TestACallAfterTheTenureEndedByTheNodesClockIsPlacedAgainNotRefused(t *testing.T) {
	is := is.New(t)
	dir := newDirectory()
	a, b := startClusterNode(t, dir, "a"), startClusterNode(t, dir, "b")
	first := a.call(t, "fake.two")
	is.Equal(first.Node, "a")

	dir.mu.Lock()
	dir.owner["fake.two"] = "b" // a was paused past its lease: b took the connection
	dir.tenures[0].ended.Store(true)
	dir.mu.Unlock()
	r := a.call(t, "fake.two") // before a's keeper told its supervisor
	is.NoErr(r.Error.Err())    // not refused as not_owner
	is.Equal(r.Node, "b")      // but passed to the new owner
	is.Equal(b.servers.SessionsCreated(), 1)
}

// publishing is the catalogs of a node that records what it is given to
// publish.
type publishing struct {
	*store.Memory
	published chan catalog.Snapshot
}

func (p publishing) Publish(snap catalog.Snapshot) { p.published <- snap }

func TestACatalogRefreshedThroughTheOwnerIsPublishedHereBeforeTheAnswer(t *testing.T) {
	is := is.New(t)
	dir := newDirectory()
	here := publishing{Memory: store.NewMemory(), published: make(chan catalog.Snapshot, 1)}
	a := startClusterNodeWith(t, dir, "a", here)
	startClusterNode(t, dir, "b")

	snap, err := a.handle.RefreshCatalog(ctx(t), "fake.one") // owned by b
	is.NoErr(err)
	is.True(len(snap.Tools) > 0)
	select {
	case got := <-here.published:
		is.Equal(got.ConnectionID, "fake.one") // a's view had it before its asker heard back
	default:
		is.Fail() // published before the answer
	}
	_, err = here.GetCatalog(ctx(t), "fake.one")
	is.True(errors.Is(err, store.ErrNotFound)) // a stored nothing: b did
}
