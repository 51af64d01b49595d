// Package app wires mcpflow together: the record store, the actor engine
// with its supervisor, the service's method table and the network edge.
// `mcpflow serve` and the integration tests start the service the same way.
package app

import (
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

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/credentials"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/contract"
	"github.com/mcpflow/mcpflow/api/edge"
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
	RunWait    time.Duration
	// MaxSteps is each run's step budget and RunTimeout its overall
	// deadline (none when 0), unless its deployment sets its own.
	MaxSteps   int
	RunTimeout time.Duration
	// WarmUp is how long Start waits for the catalogs of connections that
	// have none stored yet; 0 skips the warm-up (sessions open on first
	// use).
	WarmUp time.Duration
}

// DefaultOptions are the production settings for cfg.
func DefaultOptions(cfg *config.File) Options {
	return Options{Config: cfg, Supervisor: supervisor.DefaultOptions(), Edge: edge.DefaultOptions(), RunWait: 2 * time.Minute, MaxSteps: workflow.DefaultMaxSteps, RunTimeout: time.Hour, WarmUp: 10 * time.Second}
}

// App is a running mcpflow, before or while it serves HTTP.
type App struct {
	store      store.Store
	ownsStore  bool
	engine     *actor.Engine
	supervisor *supervisor.Handle
	edge       *edge.Server
	http       *http.Server
}

// DefaultTransports reach stdio subprocesses and streamable HTTP servers,
// with the credentials creds binds (nil: none).
func DefaultTransports(creds session.Credentials) session.TransportFactory {
	return session.Factories{
		config.TransportStdio: session.Stdio{TerminateDuration: 2 * time.Second, Credentials: creds},
		config.TransportHTTP:  session.HTTP{Credentials: creds},
	}
}

// Start opens the store, recovers runs a crash cut off, starts the actor
// system and warms up the catalogs of new connections. Serve it with Handler or ListenAndServe; stop it with
// Shutdown.
func Start(ctx context.Context, opts Options) (*App, error) {
	a := &App{store: opts.Store}
	if a.store == nil {
		root := opts.Config.StoreRoot()
		s, err := sqlite.Open(ctx, filepath.Join(root, DatabaseFile))
		if err != nil {
			return nil, fmt.Errorf("open store under %s: %w", root, err)
		}
		a.store, a.ownsStore = s, true
	}
	c, err := contract.Load()
	if err != nil {
		a.closeStore()
		return nil, fmt.Errorf("load contract: %w", err)
	}
	a.engine, err = actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		a.closeStore()
		return nil, fmt.Errorf("start actor engine: %w", err)
	}
	transports := opts.Transports
	if transports == nil {
		transports = DefaultTransports(credentials.NewBinder(credentials.FromStore(a.store)))
	}
	snaps, err := a.store.ListCatalogs(ctx)
	if err != nil {
		a.closeStore()
		return nil, fmt.Errorf("load catalogs: %w", err)
	}
	registry := catalog.NewRegistry(snaps)
	// The effective sources: the config merged with the source registry.
	sources, err := service.LoadSources(ctx, a.store, opts.Config.Connections())
	if err != nil {
		a.closeStore()
		return nil, fmt.Errorf("load sources: %w", err)
	}
	conns := sources.All()
	if opts.Supervisor.AuthHash == nil {
		opts.Supervisor.AuthHash = authDigest(a.store)
	}
	a.supervisor = supervisor.Spawn(a.engine, conns, transports, service.NewCatalogSink(a.store, registry), opts.Supervisor)
	if opts.WarmUp > 0 {
		sess := opts.Supervisor.Session
		warmUp(a.supervisor, conns, registry, opts.WarmUp, sess.ConnectTimeout+sess.CallTimeout)
	}
	svc := &service.Service{
		Store: a.store, Catalogs: registry, Engine: a.engine, Supervisor: a.supervisor, Connections: sources,
		StoreRoot: opts.Config.StoreRoot(), RunWait: opts.RunWait, CallTimeout: opts.Supervisor.Session.CallTimeout,
		MaxSteps: opts.MaxSteps, RunDeadline: opts.RunTimeout,
	}
	// Runs a stop cut off resume, or fail, before anything is served.
	recovered, err := svc.RecoverRuns(ctx)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("recover runs: %w", err), a.supervisor.Stop(ctx), a.closeStore())
	}
	if recovered.Resumed+recovered.Failed > 0 {
		slog.Info("runs cut off by the last stop", "resumed", recovered.Resumed, "failed", recovered.Failed)
	}
	a.edge = edge.New(svc.Methods(), c, opts.Edge)
	return a, nil
}

// Handler serves /ws, /rpc and /healthz.
func (a *App) Handler() http.Handler { return a.edge.Handler() }

// Serve serves HTTP on l until Shutdown.
func (a *App) Serve(l net.Listener) error {
	a.http = &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	slog.Info("mcpflow serving", "addr", l.Addr().String(), "ws", "ws://"+l.Addr().String()+"/ws")
	if err := a.http.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// Shutdown stops accepting requests, closes WebSocket connections, stops
// the actors (closing every upstream session and reaping stdio servers) and
// closes the store, all within ctx.
func (a *App) Shutdown(ctx context.Context) error {
	var errs []error
	if a.http != nil {
		errs = append(errs, a.http.Shutdown(ctx))
	}
	a.edge.Close()
	errs = append(errs, a.supervisor.Stop(ctx))
	errs = append(errs, a.closeStore())
	return errors.Join(errs...)
}

func (a *App) closeStore() error {
	if !a.ownsStore {
		return nil
	}
	if err := a.store.Close(); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return nil
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
