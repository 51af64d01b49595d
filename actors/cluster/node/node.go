// Package node owns one mcpflow node's part in a cluster: its node lease
// (which keeps it a member), its row in the members table, its place in
// hollywood's cluster (membership read from PostgreSQL by
// membership.NewProvider), its lease keeper and the placement of
// connections built on it, telling the supervisor of each connection
// tenure the node loses and each member that leaves, and the recovery of
// the runs of nodes that died.
package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/anthdm/hollywood/cluster"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mcpflow/mcpflow/actors/cluster/lease"
	"github.com/mcpflow/mcpflow/actors/cluster/membership"
	"github.com/mcpflow/mcpflow/actors/cluster/placement"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/supervisor"
)

// Options configure a node.
type Options struct {
	Config config.Cluster
	// Pool is the cluster's database (the postgres store's pool).
	Pool *pgxpool.Pool
	// Engine is the node's engine, whose remote listens on
	// Config.Listen (wire.Remote).
	Engine *actor.Engine
	// Metrics records the leases and members; nil records nothing.
	Metrics *metrics.Metrics
}

// Recover recovers the running runs of node dead (this node's own id at
// its start, "" for runs a single-node store left): claims them for this
// node and resumes or fails them under the crash rules. The service
// provides it.
type Recover func(ctx context.Context, dead string) (int, error)

// Node is a running member of the cluster. Its goroutines (the keeper's
// renewals, the losses it dispatches, the reaper of dead members) end
// with Stop.
type Node struct {
	id       string
	ttl      time.Duration
	engine   *actor.Engine
	table    *lease.Table
	keeper   *lease.Keeper
	registry *membership.Registry
	cluster  *cluster.Cluster
	place    *placement.Placement
	metrics  *metrics.Metrics
	log      *slog.Logger

	ctx    context.Context // ends with Stop
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu   sync.Mutex
	self membership.Member
	// joined is closed, and replaced, each time the node takes its node
	// lease (join): WaitMember waits on it.
	joined  chan struct{}
	reaped  map[string]time.Time // dead nodes recovered, by the start of the incarnation that died
	watcher *actor.PID           // set by Attach
}

// joinTimeout bounds each database step of Start and Stop.
const joinTimeout = 10 * time.Second

// SupervisorID is the actor id of every node's supervisor, where the
// other nodes send a connection's messages.
const SupervisorID = "supervisor/mcp"

// Start makes the node a member: it takes a fresh tenure of its node
// lease (a new epoch, even when a previous run of the node still held
// it), registers its addresses, starts its lease keeper and joins
// hollywood's cluster. Attach then connects it to the supervisor and the
// service.
func Start(ctx context.Context, opts Options) (*Node, error) {
	cfg := opts.Config
	ttl := cfg.LeaseTTL()
	table, err := lease.New(ctx, opts.Pool)
	if err != nil {
		return nil, fmt.Errorf("cluster node %q: %w", cfg.NodeID, err)
	}
	log := slog.Default().With("node", cfg.NodeID)
	var lm lease.Metrics
	if opts.Metrics != nil {
		lm = opts.Metrics
	}
	keeper, err := lease.NewKeeper(table, cfg.NodeID, lease.KeeperOptions{TTL: ttl, Metrics: lm, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("cluster node %q: %w", cfg.NodeID, err)
	}
	run, cancel := context.WithCancel(context.Background())
	n := &Node{
		id: cfg.NodeID, ttl: ttl, engine: opts.Engine, table: table, keeper: keeper,
		registry: membership.NewRegistry(opts.Pool), metrics: opts.Metrics, log: log,
		ctx: run, cancel: cancel, reaped: map[string]time.Time{}, joined: make(chan struct{}),
		self: membership.Member{NodeID: cfg.NodeID, ClusterAddress: cfg.AdvertiseAddress()},
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		if err := keeper.Run(run); err != nil {
			log.Error("lease keeper", "err", err)
		}
	}()
	jctx, jcancel := context.WithTimeout(ctx, joinTimeout)
	defer jcancel()
	if err := n.join(jctx); err != nil {
		cancel()
		n.wg.Wait()
		return nil, err
	}
	source := membership.Registered(n.registry)
	if len(cfg.Members) > 0 {
		static := make([]membership.Member, 0, len(cfg.Members)+1)
		static = append(static, n.self)
		for _, m := range cfg.Members {
			if m.NodeID != cfg.NodeID {
				static = append(static, membership.Member{NodeID: m.NodeID, ClusterAddress: m.Address})
			}
		}
		source = membership.Static(n.registry, static)
	}
	n.cluster, err = cluster.New(cluster.NewConfig().
		WithID(cfg.NodeID).WithListenAddr(cfg.Listen).WithEngine(opts.Engine).
		WithRequestTimeout(2 * time.Second).
		WithProvider(membership.NewProvider(source, membership.ProviderOptions{Interval: min(time.Second, ttl/3), Logger: log, Metrics: opts.Metrics})))
	if err != nil {
		cancel()
		n.wg.Wait()
		return nil, fmt.Errorf("cluster node %q: join hollywood's cluster: %w", cfg.NodeID, err)
	}
	n.cluster.Start()
	n.place = placement.New(placement.Options{
		Node: cfg.NodeID, Keeper: keeper, Table: table, Members: n.cluster.Members, Registry: n.registry, Supervisor: SupervisorID,
	})
	log.Info("cluster node joined", "listen", cfg.Listen, "advertise", cfg.AdvertiseAddress(), "lease_ttl", ttl)
	return n, nil
}

// join takes a fresh tenure of the node lease and registers the node.
func (n *Node) join(ctx context.Context) error {
	key := membership.NodeKey(n.id)
	if st, err := n.table.Get(ctx, key); err == nil && st.Live && st.Owner == n.id {
		// A previous run of this node: its tenure ends, so that this one
		// gets the next epoch and anything the previous one left is
		// fenced.
		prev := lease.Lease{Key: key, Owner: n.id, Epoch: st.Epoch}
		if err := n.table.Release(ctx, prev); err != nil && !errors.Is(err, lease.ErrLost) {
			return fmt.Errorf("cluster node %q: end the previous tenure: %w", n.id, err)
		}
	}
	l, err := n.keeper.Acquire(ctx, key)
	for wait := 50 * time.Millisecond; errors.Is(err, lease.ErrHeld); wait = min(2*wait, time.Second) {
		// Another node holds it while it recovers this node's runs from
		// its last run: for a moment.
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return fmt.Errorf("cluster node %q: take the node lease, held by another node that recovers this one's runs: %w", n.id, err)
		}
		l, err = n.keeper.Acquire(ctx, key)
	}
	if err != nil {
		return fmt.Errorf("cluster node %q: take the node lease: %w", n.id, err)
	}
	n.mu.Lock()
	self := n.self
	n.mu.Unlock()
	if err := n.registry.Register(ctx, self); err != nil {
		return fmt.Errorf("cluster node %q: %w", n.id, err)
	}
	n.log.Info("node lease taken", "epoch", l.Epoch)
	n.mu.Lock()
	close(n.joined)
	n.joined = make(chan struct{})
	n.mu.Unlock()
	return nil
}

// WaitMember returns nil once the node holds its node lease, live by the
// database's clock, or ctx's error: at once while it is a member; after
// its lease lapsed, once it has rejoined (dispatchLosses). The run
// manager waits so before it tries again a run that the store refused
// while the node was not a member (store.ErrNotMember). It reads the
// lease each time the node joins, and every third of the ttl besides.
func (n *Node) WaitMember(ctx context.Context) error {
	key := membership.NodeKey(n.id)
	for {
		n.mu.Lock()
		joined := n.joined
		n.mu.Unlock()
		st, err := n.table.Get(ctx, key)
		if err == nil && st.Live && st.Owner == n.id {
			return nil
		}
		select {
		case <-joined:
		case <-time.After(n.ttl / 3):
		case <-ctx.Done():
			return fmt.Errorf("cluster node %q: wait to be a member again: %w", n.id, errors.Join(ctx.Err(), err))
		}
	}
}

// ID is the node's id.
func (n *Node) ID() string { return n.id }

// TTL is the ttl of the node's leases.
func (n *Node) TTL() time.Duration { return n.ttl }

// Placement places the supervisor's connections (supervisor.Options).
func (n *Node) Placement() supervisor.Placement { return n.place }

// Cluster is the node's hollywood cluster.
func (n *Node) Cluster() *cluster.Cluster { return n.cluster }

// Advertise registers the address the node's edge serves at.
func (n *Node) Advertise(ctx context.Context, httpAddress string) error {
	n.mu.Lock()
	n.self.HTTPAddress = httpAddress
	self := n.self
	n.mu.Unlock()
	return n.registry.Update(ctx, self)
}

// Attach connects the node to its supervisor, which is told of each
// connection tenure the node loses, and starts recovering the runs of
// nodes that die with recover. Call it once, after the node's own runs
// were recovered.
func (n *Node) Attach(sup *actor.PID, recover Recover) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.watcher != nil {
		return
	}
	n.watcher = n.watch(sup)
	n.wg.Add(2)
	go func() {
		defer n.wg.Done()
		n.dispatchLosses(sup)
	}()
	go func() {
		defer n.wg.Done()
		n.reap(recover)
	}()
}

// dispatchLosses tells the supervisor of each connection tenure the
// keeper loses, and rejoins when the node lease itself was lost (the node
// was paused, or cut off from the database, past its ttl: other nodes may
// have claimed its runs, whose commits here are then refused).
func (n *Node) dispatchLosses(sup *actor.PID) {
	for loss := range n.keeper.Lost() {
		if id, ok := placement.ConnectionOf(loss.Lease.Key); ok {
			n.engine.Send(sup, supervisor.TenureEnded{Connection: id, Epoch: loss.Lease.Epoch})
			continue
		}
		if loss.Lease.Key != membership.NodeKey(n.id) || n.ctx.Err() != nil {
			continue // a dead node's lease, held while its runs were recovered; or SchedulesKey, whose loss Leads sees
		}
		n.log.Error("this node's membership lapsed: other nodes may have taken its connections and runs; rejoining", "err", loss.Err)
		n.rejoin()
	}
}

// rejoin takes the node lease again, retrying until it succeeds or the
// node stops.
func (n *Node) rejoin() {
	for wait := 100 * time.Millisecond; n.ctx.Err() == nil; wait = min(2*wait, n.ttl/3) {
		ctx, cancel := context.WithTimeout(n.ctx, joinTimeout)
		err := n.join(ctx)
		cancel()
		if err == nil {
			return
		}
		n.log.Warn("rejoin the cluster", "err", err, "retry_in", wait)
		select {
		case <-time.After(wait):
		case <-n.ctx.Done():
		}
	}
}

// reap recovers the runs of dead members every half ttl: a member whose
// node lease has expired is dead (or cut off); the first node to take its
// lease claims its running runs, recovers them, and gives the lease up.
func (n *Node) reap(recover Recover) {
	tick := time.NewTicker(n.ttl / 2)
	defer tick.Stop()
	for {
		select {
		case <-n.ctx.Done():
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(n.ctx, n.ttl)
		n.reapOnce(ctx, recover)
		cancel()
	}
}

// reapOnce recovers each dead member once per incarnation.
func (n *Node) reapOnce(ctx context.Context, recover Recover) {
	members, err := n.registry.All(ctx)
	if err != nil {
		n.log.Warn("read the members to find dead ones", "err", err)
		return
	}
	for _, m := range members {
		if m.Live || m.NodeID == n.id || n.reaped[m.NodeID].Equal(m.StartedAt) {
			continue
		}
		key := membership.NodeKey(m.NodeID)
		if _, err := n.keeper.Acquire(ctx, key); err != nil {
			if !errors.Is(err, lease.ErrHeld) {
				n.log.Warn("take a dead member's lease", "member", m.NodeID, "err", err)
			}
			continue // another node recovers it, or it is back
		}
		count, err := recover(ctx, m.NodeID)
		if err != nil {
			n.log.Error("recover a dead member's runs", "member", m.NodeID, "err", err)
		} else {
			n.reaped[m.NodeID] = m.StartedAt
			n.metrics.RunsClaimed(count)
			n.log.Warn("dead member's runs recovered", "member", m.NodeID, "runs", count)
		}
		if err := n.keeper.Release(ctx, key); err != nil {
			n.log.Warn("give a dead member's lease up", "member", m.NodeID, "err", err)
		}
	}
}

// Stop leaves the cluster within ctx: it gives every lease up (the
// connections it owned may be taken at once), leaves hollywood's cluster
// and stops its goroutines.
func (n *Node) Stop(ctx context.Context) error {
	n.mu.Lock()
	watcher := n.watcher
	n.mu.Unlock()
	if watcher != nil {
		n.unwatch(watcher)
	}
	err := n.keeper.ReleaseAll(ctx)
	n.cancel()
	n.cluster.Stop()
	done := make(chan struct{})
	go func() {
		n.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return errors.Join(err, fmt.Errorf("cluster node %q: stop: %w", n.id, ctx.Err()))
	}
	if err != nil {
		return fmt.Errorf("cluster node %q: give the leases up: %w", n.id, err)
	}
	return nil
}
