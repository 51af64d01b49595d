// Package placement places each connection's shared session on one node
// of a cluster (supervisor.Placement): on the node that holds the
// connection's lease. When nobody holds it, the connection goes to its
// home: of the live members where it may run (its source's `nodes`, or
// all), the one that ranks first for it by rendezvous hashing, so that
// connections spread evenly over the nodes, every node agrees where each
// belongs, and only the connections of a node that leaves move. The
// owner runs the session under a tenure (session.Tenure) that its lease
// keeper renews and fences; every other node passes the connection's
// messages to the owner's supervisor, at the address hollywood's cluster
// knows the owner by.
package placement

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/anthdm/hollywood/cluster"

	"github.com/mcpflow/mcpflow/actors/cluster/lease"
	"github.com/mcpflow/mcpflow/actors/cluster/membership"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/supervisor"
)

// connectionKeyPrefix begins the lease key of every connection.
const connectionKeyPrefix = "conn/"

// ConnectionKey is the key of connection id's lease.
func ConnectionKey(id string) string { return connectionKeyPrefix + id }

// ConnectionOf returns the connection whose lease key is key, if it is
// one.
func ConnectionOf(key string) (string, bool) {
	return strings.CutPrefix(key, connectionKeyPrefix)
}

// DefaultTrust is how long a node passes a connection's messages to the
// owner it found before it asks the database again: short, so that a
// connection released by a node that stops is taken over at once.
const DefaultTrust = time.Second

// Options configure a Placement.
type Options struct {
	// Node is this node's id, and Keeper its lease keeper, which takes
	// and renews its connections' leases.
	Node   string
	Keeper *lease.Keeper
	Table  *lease.Table
	// Members are the live members of the cluster as hollywood's cluster
	// knows them (cluster.Cluster.Members): where each node is reached.
	Members func() []*cluster.Member
	// Registry is asked where a node is when Members does not know it
	// (a node that just woke up from a pause, whose view lags, or whose
	// cluster agent did not answer in time).
	Registry *membership.Registry
	// Supervisor is the actor id of every node's supervisor
	// ("supervisor/mcp").
	Supervisor string
	// Trust is DefaultTrust when zero.
	Trust time.Duration
}

// Placement implements supervisor.Placement with leases.
type Placement struct {
	opts Options
}

// New returns the placement of opts.Node.
func New(opts Options) *Placement {
	if opts.Trust <= 0 {
		opts.Trust = DefaultTrust
	}
	return &Placement{opts: opts}
}

// Place implements supervisor.Placement: this node takes the connection
// when nobody holds its lease, it may run here, and this node is its home
// or was passed its message by a node that took this one for it (two
// nodes whose views of the members differ for a moment so settle it);
// otherwise the connection's messages go to the node that holds it, or
// to its home, which takes it.
func (p *Placement) Place(ctx context.Context, conn config.Connection, passed bool) (supervisor.Placed, error) {
	key := ConnectionKey(conn.ID)
	live := p.addresses()
	home := Home(conn, live)
	if mayRun(conn, p.opts.Node) && (passed || home == p.opts.Node || home == "") {
		l, err := p.opts.Keeper.Acquire(ctx, key)
		var held *lease.HeldError
		switch {
		case err == nil:
			return supervisor.Placed{Tenure: &tenure{keeper: p.opts.Keeper, table: p.opts.Table, lease: l}}, nil
		case errors.As(err, &held):
			return p.at(ctx, held.Owner, live)
		default:
			return supervisor.Placed{}, fmt.Errorf("take the lease of connection %q: %w", conn.ID, err)
		}
	}
	st, err := p.opts.Table.Get(ctx, key)
	switch {
	case err == nil && st.Live:
		return p.at(ctx, st.Owner, live)
	case err != nil && !errors.Is(err, lease.ErrNotFound):
		return supervisor.Placed{}, fmt.Errorf("read the lease of connection %q: %w", conn.ID, err)
	case home == "":
		return supervisor.Placed{}, fmt.Errorf("connection %q runs only on nodes %s, and none of them is a live member",
			conn.ID, strings.Join(conn.Nodes, ", "))
	}
	return p.at(ctx, home, live)
}

// mayRun reports whether conn may run on node.
func mayRun(conn config.Connection, node string) bool {
	return len(conn.Nodes) == 0 || slices.Contains(conn.Nodes, node)
}

// Home is where conn belongs among the live members (node ids): of those
// where it may run, the one with the highest rendezvous score for it; ""
// when none is live.
func Home[V any](conn config.Connection, live map[string]V) string {
	var home string
	var best uint64
	for node := range live {
		if !mayRun(conn, node) {
			continue
		}
		h := fnv.New64a()
		h.Write([]byte(conn.ID))
		h.Write([]byte{0})
		h.Write([]byte(node))
		if score := mix(h.Sum64()); home == "" || score > best || (score == best && node < home) {
			home, best = node, score
		}
	}
	return home
}

// mix spreads the bits of an FNV hash (splitmix64's finalizer): FNV alone
// scores ids that differ in their last byte (node ids b and c) too much
// alike, and rendezvous hashing needs independent scores.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// at places a connection on node, a live member: at the address live
// gives, else at the one it registered.
func (p *Placement) at(ctx context.Context, node string, live map[string]string) (supervisor.Placed, error) {
	addr, ok := live[node]
	if !ok && p.opts.Registry != nil {
		members, err := p.opts.Registry.Live(ctx)
		if err != nil {
			return supervisor.Placed{}, fmt.Errorf("find node %q: %w", node, err)
		}
		for _, m := range members {
			if m.NodeID == node {
				addr, ok = m.ClusterAddress, true
			}
		}
	}
	if !ok {
		return supervisor.Placed{}, fmt.Errorf("node %q holds the connection but is not a live member", node)
	}
	return supervisor.Placed{
		Owner: node, Supervisor: actor.NewPID(addr, p.opts.Supervisor), Until: time.Now().Add(p.opts.Trust),
	}, nil
}

// addresses are the live members' cluster addresses, by node id.
func (p *Placement) addresses() map[string]string {
	members := p.opts.Members()
	out := make(map[string]string, len(members))
	for _, m := range members {
		out[m.ID] = m.Host
	}
	return out
}

// Release implements supervisor.Placement.
func (p *Placement) Release(ctx context.Context, id string) error {
	if err := p.opts.Keeper.Release(ctx, ConnectionKey(id)); err != nil {
		return fmt.Errorf("release connection %q: %w", id, err)
	}
	return nil
}

// tenure is this node's tenure of a connection: its lease, which the
// keeper renews.
type tenure struct {
	keeper *lease.Keeper
	table  *lease.Table
	lease  lease.Lease
}

func (t *tenure) Node() string { return t.lease.Owner }
func (t *tenure) Epoch() int64 { return t.lease.Epoch }

// Valid implements session.Tenure by the keeper's own clock.
func (t *tenure) Valid() bool { return t.keeper.Holds(t.lease.Key, t.lease.Epoch) }

// NextGeneration implements session.Tenure, fenced in the database.
func (t *tenure) NextGeneration(ctx context.Context) (int64, error) {
	return t.table.NextGeneration(ctx, t.lease)
}
