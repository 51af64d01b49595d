// Package app wires mcpflow together: the record store, the actor engine
// with its supervisor, the service's method table and the network edge.
// `mcpflow serve` and the integration tests start the service the same way.
package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/cluster/lease"
	"github.com/mcpflow/mcpflow/actors/cluster/membership"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/retention"
	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/actors/schedules"
	"github.com/mcpflow/mcpflow/actors/secrets"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/console"
	"github.com/mcpflow/mcpflow/api/contract"
	"github.com/mcpflow/mcpflow/api/edge"
	"github.com/mcpflow/mcpflow/api/live"
	"github.com/mcpflow/mcpflow/api/service"
)

// DatabaseFile is the store's file name under the store root.
const DatabaseFile = "mcpflow.db"

// Options configure one service instance.
type Options struct {
	Config *config.File
	// Store, when set, is used instead of opening the SQLite store under
	// the config's store root (tests pass an in-memory store).
	Store store.Store
	// Transports reach upstream servers; nil uses stdio subprocesses and
	// streamable HTTP.
	Transports session.TransportFactory
	Supervisor supervisor.Options
	Edge       edge.Options
	// Hub bounds live event subscriptions; its MaxSubscriptions is the
	// edge's.
	Hub     live.Options
	RunWait time.Duration
	// MaxConcurrentRuns bounds the workflow.runs.start calls running at
	// once, server-wide (server.edge.max_concurrent_runs; 0 takes
	// service.DefaultMaxConcurrentRuns).
	MaxConcurrentRuns int
	// MaxSteps is each run's step budget and RunTimeout its overall
	// deadline (none when 0), unless its deployment sets its own. No run
	// takes more steps than the config's server.limits.max_steps, and
	// Start refuses a MaxSteps above it.
	MaxSteps   int
	RunTimeout time.Duration
	// RefreshAtStart lists, in the background, the catalogs that are
	// missing or stale at the start (at most Supervisor's
	// MaxConcurrentRefreshes at once); false lists none then: sessions
	// open on first use.
	RefreshAtStart bool
	// WarmUp is how long Start waits for the catalogs of connections that
	// have none stored yet (with RefreshAtStart); 0 serves at once.
	WarmUp time.Duration
	// Retention prunes the store's finished runs once their retention
	// has passed (which the store opened from the config's
	// server.retention stamps on them).
	Retention retention.Options
}

// DefaultOptions are the production settings for cfg.
func DefaultOptions(cfg *config.File) Options {
	sup := supervisor.DefaultOptions()
	edgeOpts := edge.DefaultOptions()
	if cfg != nil {
		sup = sup.WithConfig(cfg.Server.Supervision) // the config's default supervision policy
		edgeOpts = edgeOpts.WithConfig(cfg.Server.Edge)
	}
	var hub live.Options
	maxRuns := service.DefaultMaxConcurrentRuns
	if cfg != nil && cfg.Server.Edge != nil {
		hub.Buffer = cfg.Server.Edge.SubscriptionBuffer
		maxRuns = cmp.Or(cfg.Server.Edge.MaxConcurrentRuns, maxRuns)
	}
	warmUp := 10 * time.Second
	if cfg != nil && cfg.Server.Supervision != nil && cfg.Server.Supervision.WarmUpMS != nil {
		warmUp = time.Duration(*cfg.Server.Supervision.WarmUpMS) * time.Millisecond
	}
	var ret *config.Retention
	if cfg != nil {
		ret = cfg.Server.Retention
	}
	return Options{Config: cfg, Supervisor: sup, Edge: edgeOpts, Hub: hub, RunWait: 2 * time.Minute, MaxConcurrentRuns: maxRuns, MaxSteps: workflow.DefaultMaxSteps, RunTimeout: time.Hour,
		RefreshAtStart: true, WarmUp: warmUp, Retention: retention.OptionsFor(ret, nil)}
}

// resultBytes is the server's bound on one upstream answer and on what a
// built-in step hands to the next: server.limits.max_result_bytes.
func (o Options) resultBytes() int64 {
	if o.Config == nil {
		return config.DefaultMaxResultBytes
	}
	return o.Config.Server.Limits.ResultBytes()
}

// App is a running mcpflow, before or while it serves HTTP.
type App struct {
	store      store.Store
	ownsStore  bool
	lock       *StoreLock
	keys       *secrets.Keyring // seal the auth records of the store the App opened
	service    *service.Service
	runs       *runs.Manager   // the runs the service starts, and those a stop cut off
	audit      *audit.Appender // the admin events of the runs' direct calls, appended off their path
	hub        *live.Hub
	engine     *actor.Engine
	supervisor *supervisor.Handle
	replies    *reply.Router         // the answers the service's handlers wait for
	refresher  *supervisor.Refresher // background catalog listing; nil when off
	pruner     *retention.Pruner     // the pruning of finished runs
	scheduler  *schedules.Scheduler  // the scheduling loop
	pool       *session.Pool         // the HTTP sessions' connections; nil with Options.Transports
	edge       *edge.Server
	http       *http.Server
	life       *lifecycle // /readyz and the service manager's notifications
	disk       *diskSpace // whether the store's disk is full, or was at start
	tracer     *tracer    // OpenTelemetry tracing; nil when off
	member     *member    // the App's part in a cluster; nil on one node
	face       *face      // /mcp; nil when server.mcp.disabled
	// closeTimeout is each session's CloseTimeout, which Shutdown keeps
	// for stopping the sessions.
	closeTimeout time.Duration
}

// DefaultTransports reach stdio subprocesses (stopped and reaped as sess
// says) and streamable HTTP servers, whose sessions share the connections
// of pool, with the credentials creds binds (nil: none), each answer
// bounded by its source's max_result_bytes or sess.MaxResultBytes.
func DefaultTransports(creds session.Credentials, sess session.Options, pool *session.Pool) session.TransportFactory {
	web := session.HTTP{Credentials: creds, Pool: pool, MaxResultBytes: sess.MaxResultBytes}
	return session.Factories{
		config.TransportStdio: session.NewStdio(sess, creds),
		config.TransportHTTP:  web,
		config.TransportSSE:   web,
	}
}

// Start opens the store, recovers runs a crash cut off, starts the actor
// system and warms up the catalogs of new connections. Serve it with
// Handler or ListenAndServe; stop it with Shutdown.
//
// It builds the App in stages, each one part, in the order in which the
// parts need one another (stages.go); each pushes how to undo its part,
// and when a stage fails, every part built before it is undone, the last
// first.
func Start(ctx context.Context, opts Options) (_ *App, err error) {
	if err := opts.checkStepBudget(); err != nil {
		return nil, err
	}
	if err := withAccess(&opts); err != nil {
		return nil, err
	}
	m := withMetrics(&opts)
	a := &App{store: opts.Store, closeTimeout: opts.Supervisor.Session.CloseTimeout}
	a.life = newLifecycle(os.Getenv, a.healthy)
	a.disk = newDiskSpace(m)
	a.life.store = a.disk.status
	var undo undoStack
	defer func() {
		if err != nil {
			err = errors.Join(err, undo.unwind(ctx))
		}
	}()
	if err := a.openOwnStore(ctx, opts.Config, &undo); err != nil {
		return nil, err
	}
	c, err := contract.Load()
	if err != nil {
		return nil, fmt.Errorf("load contract: %w", err)
	}
	states, err := faceStates(a.keys)
	if err != nil {
		return nil, err
	}
	// The same keys seal the HTTP session id an upstream task's run keeps
	// in its checkpoint (session.TaskRef).
	opts.Supervisor.Session.Sealer = states
	if err := a.startEngine(ctx, opts.Config, m, &opts.Supervisor, &undo); err != nil {
		return nil, err
	}
	transports := a.transports(opts, &undo)
	observed := a.startHub(opts.Hub, opts.Edge.MaxSubscriptions, m, &undo)
	a.startReplies(&undo)
	registry, view, err := loadSources(ctx, a.store, observed, opts.Config)
	if err != nil {
		return nil, err
	}
	sink := a.startSupervisor(ctx, opts, transports, observed, registry, view, &undo)
	a.startRuns(opts, m, observed, registry, view, &undo)
	a.newService(opts, observed, registry, view, sink)
	a.life.sources = a.service.SourcesHealth
	a.startTracer(ctx, &undo) // before any run starts, recovered ones included
	if err := a.recoverCutOff(ctx); err != nil {
		return nil, err
	}
	a.startScheduler(observed, m) // before the edge serves the methods that reach it
	a.startEdge(opts.Edge, c)
	mountHooks(a.edge, observed)
	a.pruner = retention.Start(a.store, opts.Retention)
	a.face = startFace(a.edge, opts.Config.Server.MCP, states, a.service.Exposures)
	a.life.ready()
	return a, nil
}

// Handler serves /ws, /rpc and /healthz (the edge's), /readyz, and the
// web console's assets at /console (no token: the page asks for one and
// then talks to /ws like any browser client).
func (a *App) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", a.edge.Handler())
	mux.HandleFunc("GET /readyz", a.life.serveReadyz)
	page := console.Handler(a.edge.Options().Guard.Enabled())
	mux.Handle(console.Path, page)
	mux.Handle(console.Path+"/", page)
	return mux
}

// servingAttrs are what the serve log says where to go: the WebSocket API,
// the web console and, unless it is off, the MCP face (the README sends a
// user to both).
func (a *App) servingAttrs(addr string) []any {
	attrs := []any{"addr", addr, "ws", "ws://" + addr + "/ws", "console", "http://" + addr + console.Path}
	if a.face != nil {
		attrs = append(attrs, "mcp", "http://"+addr+"/mcp")
	}
	return attrs
}

// Serve serves HTTP on l until Shutdown.
func (a *App) Serve(l net.Listener) error {
	// Headers within the edge's ReadHeaderTimeout; the edge bounds bodies
	// and replies per request itself (a server-wide ReadTimeout or
	// WriteTimeout would also cut its long-lived WebSocket connections).
	a.http = &http.Server{Handler: a.Handler(), ReadHeaderTimeout: a.edge.Options().ReadHeaderTimeout, IdleTimeout: 2 * time.Minute}
	slog.Info("mcpflow serving", a.servingAttrs(l.Addr().String())...)
	if a.member != nil {
		ctx, cancel := context.WithTimeout(context.Background(), joinTimeout)
		if err := a.member.node.Advertise(ctx, l.Addr().String()); err != nil {
			slog.Warn("the edge's address is not registered for the cluster", "err", err)
		}
		cancel()
	}
	a.life.serving(l.Addr().String()) // READY=1; the listener is bound
	if err := a.http.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// stopRefresher stops the background catalog listing, if it runs.
func (a *App) stopRefresher(ctx context.Context) error {
	if a.refresher == nil {
		return nil
	}
	return a.refresher.Stop(ctx)
}

// openStore opens the store server.store names, its auth records sealed
// by keys: the PostgreSQL database of its dsn for kind postgres (whose
// errors name the database, never the dsn), opened for the server's
// cluster node if it is one, else the SQLite database under root.
func openStore(ctx context.Context, server config.Server, root string, keys *secrets.Keyring, disk *diskSpace) (store.Store, error) {
	cfg := server.Store
	kept := store.WithRetention(server.Retention.Finished())
	sealed := store.WithSealer(keys)
	space := store.WithSpace(disk.space)
	if cfg.Kind == config.StorePostgres {
		opts := []postgres.Option{postgres.WithStoreOptions(kept, sealed)}
		if server.Cluster != nil {
			id := server.Cluster.NodeID
			opts = append(opts, postgres.WithNode(id), postgres.WithMembership(postgres.Membership{
				Key: membership.NodeKey(id), Held: lease.HeldQuery, // a node whose membership lapsed creates no run
			}))
		}
		s, err := postgres.Open(ctx, cfg.DSN, opts...)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	path := filepath.Join(root, DatabaseFile)
	s, err := sqlite.Open(ctx, path, sqlite.WithSync(sqlite.Sync(cfg.Sync)), sqlite.WithStoreOptions(kept, sealed, space))
	if errors.Is(err, store.ErrFull) {
		// Serve what is stored rather than exit: reads work, every
		// write is refused as the disk being full.
		disk.readOnly = true
		ro, roErr := sqlite.OpenReadOnly(ctx, path, sqlite.WithStoreOptions(kept, sealed, space))
		if roErr != nil {
			return nil, errors.Join(err, roErr)
		}
		slog.Error("the store's disk is full: mcpflow serves read-only (reads are served, every write is refused with StoreFull, no run starts and runs cut off are not recovered); free space under the store root and restart it",
			"root", root, "err", err)
		return ro, nil
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// closeStore closes the store if the app opened it, then releases its
// lock.
func (a *App) closeStore() error {
	if !a.ownsStore {
		return nil
	}
	var errs []error
	if err := a.store.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close store: %w", err))
	}
	if err := a.lock.Release(); err != nil {
		errs = append(errs, fmt.Errorf("release store lock: %w", err))
	}
	return errors.Join(errs...)
}

// DemoConfig is the embedded default: records under ./.mcpflow and one
// source, demo.default, which is this same binary run as `demo-server`.
func DemoConfig() (*config.File, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable: %w", err)
	}
	return &config.File{Version: 1, Server: config.Server{
		Store: config.Store{Root: config.DefaultStoreRoot},
		Sources: []config.Connection{{
			Kind: "mcp", ID: "demo.default",
			Transport: config.Transport{Kind: config.TransportStdio, Command: self, Args: []string{"demo-server"}},
		}},
	}}, nil
}
