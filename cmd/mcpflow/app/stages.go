package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/credentials"
	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/sources"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/actors/wire"
	"github.com/mcpflow/mcpflow/api/contract"
	"github.com/mcpflow/mcpflow/api/edge"
	"github.com/mcpflow/mcpflow/api/live"
	"github.com/mcpflow/mcpflow/api/rpc"
	"github.com/mcpflow/mcpflow/api/service"
)

// The stages of Start, in its order. Each builds one part of the App and,
// when the part needs undoing should a later stage fail, pushes its undo.

// withAccess fills the edge's token guard and Host/Origin gate from the
// config's access block, where opts sets none.
func withAccess(opts *Options) error {
	if opts.Edge.Guard != nil && opts.Edge.Gate != nil {
		return nil
	}
	guard, gate, err := Access(opts.Config, nil)
	if err != nil {
		return err
	}
	opts.Edge.Guard, opts.Edge.Gate = cmp.Or(opts.Edge.Guard, guard), cmp.Or(opts.Edge.Gate, gate)
	return nil
}

// openOwnStore opens the store under the config's store root, unless the
// App was given one: first its lock (one owner per store: nothing is
// opened, migrated or recovered before the lock is ours), then the keys
// that seal its auth records, then the store. Undone by closeStore.
func (a *App) openOwnStore(ctx context.Context, cfg *config.File, undo *undoStack) error {
	if a.store != nil {
		return nil
	}
	root := cfg.StoreRoot()
	lock, err := LockStore(root)
	if err != nil {
		return err
	}
	keys, err := openKeys(cfg, root, os.Getenv)
	if err != nil {
		return errors.Join(fmt.Errorf("open the store's keys: %w", err), lock.Release())
	}
	s, err := openStore(ctx, cfg.Server, root, keys.keys, a.disk)
	if err != nil {
		return errors.Join(fmt.Errorf("open store under %s: %w", root, err), keys.forget(err), lock.Release())
	}
	a.store, a.ownsStore, a.lock, a.keys = s, true, lock, keys.keys
	undo.push(func(context.Context) error { return a.closeStore() })
	return nil
}

// startEngine starts the actor engine and, with a cluster block, joins
// the cluster (undone by leaving it), whose placement the supervisor
// then follows.
func (a *App) startEngine(ctx context.Context, cfg *config.File, m *metrics.Metrics, sup *supervisor.Options, undo *undoStack) error {
	var cluster *config.Cluster
	if cfg != nil {
		cluster = cfg.Server.Cluster
	}
	var remote *wire.Remote
	var err error
	a.engine, remote, err = newEngine(cluster)
	if err != nil {
		return fmt.Errorf("start actor engine: %w", err)
	}
	if cluster == nil {
		return nil
	}
	if a.member, err = join(ctx, cluster, a.store, a.engine, remote, m); err != nil {
		remote.Stop().Wait()
		return err
	}
	undo.push(a.member.stop)
	sup.Placement = a.member.node.Placement()
	return nil
}

// transports returns how the sessions reach their upstream servers: opts'
// own, else stdio subprocesses and HTTP over a connection pool (whose idle
// connections the undo closes), with the credentials the store keeps.
func (a *App) transports(opts Options, undo *undoStack) session.TransportFactory {
	if opts.Transports != nil {
		return opts.Transports
	}
	a.pool = session.NewPool()
	undo.push(func(context.Context) error { a.pool.Close(); return nil })
	binder := credentials.NewBinder(credentials.FromStore(a.store))
	binder.Records = a.store // rotated tokens and discovered clients, sealed
	sess := opts.Supervisor.Session
	sess.MaxResultBytes = opts.resultBytes()
	return DefaultTransports(binder, sess, a.pool)
}

// startHub starts the live event hub and returns the store as the hub
// observes it, through which every write goes, so that subscriptions see
// each commit; in a cluster the hub also follows every other node's
// commits (undone first: the follower stops before the hub closes).
func (a *App) startHub(opts live.Options, maxSubscriptions int, m *metrics.Metrics, undo *undoStack) store.Store {
	opts.MaxSubscriptions = maxSubscriptions
	a.hub = live.NewHub(a.store, opts)
	undo.push(a.hub.Close)
	if a.member != nil {
		a.member.follow(a.hub)
		undo.push(a.member.quiet)
	}
	observed := store.Observed(a.store, a.hub, m)
	a.disk.events.Store(observed)
	return observed
}

// startReplies starts the router of the answers the service's handlers
// wait for (run starts and ends, cancels, direct tool calls).
func (a *App) startReplies(undo *undoStack) {
	a.replies = reply.NewRouter(a.engine, "service")
	undo.push(a.replies.Stop)
}

// loadSources reads the stored catalogs into the live registry, and the
// effective sources: the config merged with the source registry.
func loadSources(ctx context.Context, st, observed store.Store, cfg *config.File) (*catalog.Registry, *config.View, error) {
	snaps, err := st.ListCatalogs(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("load catalogs: %w", err)
	}
	registry := catalog.NewRegistry(snaps)
	view, err := sources.Load(ctx, observed, cfg.Connections())
	if err != nil {
		return nil, nil, fmt.Errorf("load sources: %w", err)
	}
	return registry, view, nil
}

// startSupervisor spawns the supervisor of one session actor per source,
// which stores and publishes their catalogs through the sink it returns,
// and, with RefreshAtStart, the background listing of the catalogs that
// are missing or stale, waiting up to WarmUp for the new ones.
func (a *App) startSupervisor(ctx context.Context, opts Options, transports session.TransportFactory, observed store.Store,
	registry *catalog.Registry, view *config.View, undo *undoStack) *sources.CatalogSink {
	conns := view.All()
	if opts.Supervisor.AuthHash == nil {
		opts.Supervisor.AuthHash = authDigest(a.store)
	}
	if opts.Supervisor.Events == nil {
		opts.Supervisor.Events = observed // connection_degraded and connection_recovered
	}
	sink := sources.NewCatalogSink(observed, registry)
	a.supervisor = supervisor.Spawn(a.engine, conns, transports, sink, opts.Supervisor)
	undo.push(a.supervisor.Stop)
	if !opts.RefreshAtStart {
		return sink
	}
	sess := opts.Supervisor.Session
	a.refresher = supervisor.StartRefresher(a.supervisor, supervisor.RefresherOptions{
		Concurrency: opts.Supervisor.MaxConcurrentRefreshes, Timeout: sess.ConnectTimeout + sess.CallTimeout,
	})
	undo.push(a.stopRefresher)
	warmUp(ctx, a.refresher, conns, registry, opts.WarmUp, time.Now())
	return sink
}

// startRuns builds the run manager: it spawns the run actors, which call
// the supervisor's sessions and commit through the observed store; in a
// cluster it reaches the other nodes' desks. The admin events of its
// direct calls go through an appender of their own, off the calls' path,
// which the stop closes before the store (its undo, when a later stage
// fails).
func (a *App) startRuns(opts Options, m *metrics.Metrics, observed store.Store, registry *catalog.Registry, view *config.View, undo *undoStack) {
	a.audit = audit.StartAppender(observed, audit.AppenderOptions{Dropped: m.AdminEventDropped})
	undo.push(a.audit.Close)
	cfg := runs.Config{
		Engine: a.engine, Supervisor: a.supervisor, Replies: a.replies, Store: observed, Audit: a.audit, Catalogs: registry, Connections: view,
		CallTimeout: opts.Supervisor.Session.CallTimeout, MaxSteps: opts.MaxSteps, StepCeiling: opts.stepCeiling(), RunDeadline: opts.RunTimeout, Metrics: m,
		MaxOutputBytes: opts.resultBytes(), Live: opts.liveLimits(), IdempotencyWindow: opts.Config.Server.Retention.IdempotencyWindow(),
	}
	if a.member != nil {
		cfg.Nodes, cfg.Member, cfg.MemberWait = peers{a.member.node}, a.member.node, a.member.rejoinWait()
	}
	a.runs = runs.New(cfg)
}

// newService builds the service the method table serves and, in a
// cluster, lets the other nodes reach its runs and follows their changes.
func (a *App) newService(opts Options, observed store.Store, registry *catalog.Registry, view *config.View, sink *sources.CatalogSink) {
	srcs := sources.New(observed, view, a.supervisor)
	srcs.MCP = opts.Config.Server.MCP // a registry entry's expose block may not clash with server.mcp.expose
	a.service = &service.Service{
		Store: observed, Hub: a.hub, Catalogs: registry, Supervisor: a.supervisor, Connections: view,
		Sources: srcs, Runs: a.runs,
		StoreRoot: opts.Config.StoreRoot(), RunWait: opts.RunWait, MaxConcurrentRuns: opts.MaxConcurrentRuns,
		RotateKeys: rotator(a.keys, a.store), MCP: opts.Config.Server.MCP,
	}
	if a.member != nil {
		a.member.serve(a.service, a.runs, sink)
	}
}

// startTracer starts OpenTelemetry tracing, when the environment asks for
// it; its undo flushes what was traced.
func (a *App) startTracer(ctx context.Context, undo *undoStack) {
	a.tracer = startTracing(ctx, os.Getenv)
	undo.push(func(ctx context.Context) error { a.tracer.shutdown(ctx); return nil })
}

// recoverCutOff resumes, or fails, the runs a stop cut off, before anything is
// served: in a cluster, those this node had (other nodes' are theirs),
// and from then on those of nodes that die.
func (a *App) recoverCutOff(ctx context.Context) error {
	if a.disk.readOnly {
		slog.Warn("runs cut off by the last stop are not recovered while the store is read-only; they are at the next start that can write")
		return nil
	}
	recovered, err := a.recoverRuns(ctx)
	if err != nil {
		return fmt.Errorf("recover runs: %w", err)
	}
	if a.member != nil {
		a.member.attach(a)
	}
	if recovered.Resumed+recovered.Failed > 0 {
		slog.Info("runs cut off by the last stop", "resumed", recovered.Resumed, "failed", recovered.Failed)
	}
	return nil
}

// startEdge builds the network edge over the service's method table,
// checked against the contract c. Subscriptions push their events through
// the WebSocket connection of the request that made them.
func (a *App) startEdge(opts edge.Options, c *contract.Contract) {
	opts.RequestContext = func(ctx context.Context, c *edge.Conn) (context.Context, func()) {
		return rpc.WithNotifier(ctx, c)
	}
	a.edge = edge.New(a.service.Methods(), c, opts)
}
