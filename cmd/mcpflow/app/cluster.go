package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/anthdm/hollywood/remote"

	"github.com/mcpflow/mcpflow/actors/cluster/node"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/actors/sources"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
	"github.com/mcpflow/mcpflow/actors/wire"
	"github.com/mcpflow/mcpflow/api/live"
	"github.com/mcpflow/mcpflow/api/service"
)

// member is the App's part in a cluster (server.cluster): the node, the
// remote layer its engine talks to the other nodes through, the store it
// claims runs from, the listener that wakes its live event hub for the
// other nodes' commits, and the desk through which the other nodes cancel
// the runs it runs. A single node has none.
type member struct {
	node   *node.Node
	remote *wire.Remote
	store  *postgres.Store

	follower *follower
	listener *postgres.Listener
	unlisten context.CancelFunc
	desk     *runs.Desk
}

// newEngine starts the actor engine: with a remote layer listening on the
// cluster address for a node of a cluster.
func newEngine(cfg *config.Cluster) (*actor.Engine, *wire.Remote, error) {
	if cfg == nil {
		e, err := actor.NewEngine(actor.NewEngineConfig())
		return e, nil, err
	}
	r := wire.NewRemote(cfg.Listen, remote.NewConfig()).Advertised(cfg.AdvertiseAddress())
	e, err := actor.NewEngine(actor.NewEngineConfig().WithRemote(r))
	if err != nil {
		return nil, nil, fmt.Errorf("listen for the cluster on %s: %w", cfg.Listen, err)
	}
	return e, r, nil
}

// join makes the App a node of the cluster cfg describes, on its
// PostgreSQL store s.
func join(ctx context.Context, cfg *config.Cluster, s store.Store, engine *actor.Engine, r *wire.Remote, m *metrics.Metrics) (*member, error) {
	pg, ok := s.(*postgres.Store)
	if !ok {
		return nil, errors.New("a cluster node needs the PostgreSQL store (server.store.kind postgres)")
	}
	n, err := node.Start(ctx, node.Options{Config: *cfg, Pool: pg.Pool(), Engine: engine, Metrics: m})
	if err != nil {
		return nil, err
	}
	return &member{node: n, remote: r, store: pg}, nil
}

// follow listens to the other nodes' announcements, until quiet: hub's
// feeds wake for every event any node commits, and the changes to this
// node's caches wait for serve. Call it before the node loads its
// catalogs and sources, so that no change made meanwhile is missed.
func (c *member) follow(hub *live.Hub) {
	ctx, cancel := context.WithCancel(context.Background())
	c.follower = newFollower(hub)
	c.listener, c.unlisten = c.store.Listen(ctx, c.follower, postgres.ListenOptions{}), cancel
	select {
	case <-c.follower.connected:
	case <-time.After(listenWait):
		c.follower.reloadAll() // once it runs
		slog.Warn("the cluster's announcements are not heard yet; what changes before they are is reloaded once they are", "waited", listenWait)
	}
}

// listenWait bounds the wait for the listener's first connection.
const listenWait = 10 * time.Second

// serve lets the other nodes reach the runs of m (its desk; m reaches
// theirs through peers), svc announce the sources it applies, and applies
// the other nodes' changes to svc's caches.
func (c *member) serve(svc *service.Service, m *runs.Manager, catalogs *sources.CatalogSink) {
	svc.Sources.Announce = announcer{c.store}
	c.desk = m.SpawnDesk()
	c.follower.start(svc, catalogs)
}

// announcer announces the sources this node applied.
type announcer struct{ store *postgres.Store }

func (a announcer) SourcesApplied() { a.store.AnnounceChange(postgres.ChangeSources, "") }

// quiet stops the desk and the listener: the node takes no cancel from
// other nodes and hears no more of their commits. Call it once the runs
// have stopped, before the hub closes.
func (c *member) quiet(ctx context.Context) error {
	if c == nil {
		return nil
	}
	var errs []error
	if c.desk != nil {
		errs = append(errs, c.desk.Stop(ctx))
		c.desk = nil
	}
	if c.listener != nil {
		c.unlisten()
		select {
		case <-c.listener.Done():
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("stop the event listener: %w", ctx.Err()))
		}
		c.listener = nil
		c.follower.stop(ctx)
	}
	return errors.Join(errs...)
}

// peers are the desks of the other live members (runs.Nodes), as
// hollywood's cluster knows them.
type peers struct{ node *node.Node }

func (p peers) Peers() []*actor.PID {
	var out []*actor.PID
	for _, m := range p.node.Cluster().Members() {
		if m.ID != p.node.ID() {
			out = append(out, runs.DeskAt(m.Host))
		}
	}
	return out
}

// recoverOwn recovers the runs this node left running when it last
// stopped, and those a single-node store left: Recover of a cluster
// node.
func (c *member) recoverOwn(ctx context.Context, m *runs.Manager) (runs.Recovered, error) {
	var got runs.Recovered
	for _, from := range []string{c.node.ID(), ""} {
		r, err := c.recoverFrom(ctx, m, from)
		if err != nil {
			return got, err
		}
		got.Resumed += r.Resumed
		got.Failed += r.Failed
	}
	return got, nil
}

// recoverFrom claims the running runs of node from and recovers them.
func (c *member) recoverFrom(ctx context.Context, m *runs.Manager, from string) (runs.Recovered, error) {
	claimed, err := c.store.ClaimRuns(ctx, from)
	if err != nil {
		return runs.Recovered{}, err
	}
	return m.RecoverClaimed(ctx, claimed)
}

// attach starts recovering the runs of nodes that die, and telling the
// supervisor of the connections this node loses.
func (c *member) attach(a *App) {
	c.node.Attach(a.supervisor.PID(), func(ctx context.Context, dead string) (int, error) {
		r, err := c.recoverFrom(ctx, a.runs, dead)
		return r.Resumed + r.Failed, err
	})
}

// stop leaves the cluster, giving the node's leases up, and stops the
// remote layer.
func (c *member) stop(ctx context.Context) error {
	if c == nil {
		return nil
	}
	err := errors.Join(c.quiet(ctx), c.node.Stop(ctx))
	stopped := make(chan struct{})
	go func() {
		c.remote.Stop().Wait()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-ctx.Done():
		slog.Warn("the cluster remote did not stop in time", "err", ctx.Err())
	}
	return err
}

// rejoinWait bounds how long a start or resume the store refused, the
// node's membership having lapsed, waits for the node to rejoin
// (runs.Config.MemberWait): the node sees its loss at its next renewal (a
// third of the ttl), and a node that took its lease to claim its runs
// gives it back within a ttl.
func (c *member) rejoinWait() time.Duration { return 2 * c.node.TTL() }

// joinTimeout bounds registering the node's edge address.
const joinTimeout = 10 * time.Second

// recoverRuns recovers the runs a stop cut off: every running one on a
// single node; in a cluster, those of this node.
func (a *App) recoverRuns(ctx context.Context) (runs.Recovered, error) {
	if a.member == nil {
		return a.runs.Recover(ctx)
	}
	return a.member.recoverOwn(ctx, a.runs)
}
