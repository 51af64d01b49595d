// Command mcpflow is the MCP workflow runtime.
//
//	mcpflow serve [--config FILE] [--listen 127.0.0.1:8765]
//	mcpflow demo-server
//
// serve runs the service; without --config it keeps its records under
// ./.mcpflow and offers one source, demo.default, which is this binary run
// as demo-server: a small stdio MCP server with session-local tools.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session/reap"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/demoserver"
)

const usage = `usage:
  mcpflow serve [--config FILE] [--listen 127.0.0.1:8765] [--run-wait 2m] [--max-steps 10000] [--run-timeout 1h] [--shutdown-timeout 10s] [--log-level info] [--allow-origin ORIGIN]... [--insecure-no-auth]
  mcpflow demo-server`

func main() {
	// Hidden: the reaper serve puts between itself and each stdio server
	// (package reap), dispatched before any signal handling is set up.
	if len(os.Args) > 1 && os.Args[1] == reap.Subcommand {
		os.Exit(reap.Main(os.Args[2:]))
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "mcpflow:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:])
	case "demo-server":
		return demoserver.Run(ctx)
	default:
		return fmt.Errorf("unknown command %q\n%s", args[0], usage)
	}
}

func serve(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	configPath := fs.String("config", "", "config file (default: the embedded demo config)")
	listen := fs.String("listen", "127.0.0.1:8765", "address to listen on")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	runWait := fs.Duration("run-wait", 2*time.Minute, "how long workflow.runs.start waits for a run to finish before answering with its running state")
	maxSteps := fs.Int("max-steps", workflow.DefaultMaxSteps, "step budget of each run, unless its deployment sets limits.max_steps")
	runTimeout := fs.Duration("run-timeout", time.Hour, "overall deadline of each run from its start or resume (0: none), unless its deployment sets limits.run_timeout_seconds")
	shutdownTimeout := fs.Duration("shutdown-timeout", app.DefaultShutdownTimeout, "how long a stop on SIGTERM or SIGINT may take; steps in flight get most of it to finish (a second signal stops at once)")
	var origins stringList
	fs.Var(&origins, "allow-origin", "a browser origin (scheme://host[:port]) allowed besides loopback ones; repeat for more")
	insecure := fs.Bool("insecure-no-auth", false, "serve a non-loopback address without access tokens: anyone who can connect may deploy and run any tool")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *shutdownTimeout <= 0 {
		return errors.New("--shutdown-timeout must be positive")
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl})))

	cfg, err := loadConfig(*configPath)
	if err != nil {
		return err
	}
	opts := app.DefaultOptions(cfg)
	opts.RunWait, opts.MaxSteps, opts.RunTimeout = *runWait, *maxSteps, *runTimeout
	if opts.Edge.Guard, opts.Edge.Gate, err = app.Access(cfg, origins); err != nil {
		return err
	}
	if err := access.CheckExposure(*listen, opts.Edge.Guard, *insecure); err != nil {
		return err
	}
	switch {
	case !opts.Edge.Guard.Enabled() && access.IsLoopbackListen(*listen):
		slog.Info("no access tokens configured: serving loopback clients only, each with every scope", "listen", *listen)
	case !opts.Edge.Guard.Enabled():
		slog.Warn("--insecure-no-auth: serving without access tokens on a non-loopback address; anyone who can connect may deploy and run any tool", "listen", *listen)
	}
	opts.Supervisor.Session.StdioReaper = reap.Self()
	stopAtSecondSignal()
	// Bound first: a serve that cannot listen touches no store.
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	a, err := app.Start(ctx, opts)
	if err != nil {
		_ = l.Close()
		return err
	}
	served := make(chan error, 1)
	go func() { served <- a.Serve(l) }()
	select {
	case err = <-served:
	case <-ctx.Done():
		slog.Info("shutting down")
	}
	sctx, cancel := context.WithTimeout(context.Background(), *shutdownTimeout)
	defer cancel()
	return errors.Join(err, a.Shutdown(sctx))
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// stopAtSecondSignal exits at once on the second SIGTERM or SIGINT: the
// first one begins the graceful shutdown (through run's context), and the
// store keeps whatever was committed.
func stopAtSecondSignal() {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-signals
		sig := <-signals
		slog.Error("second signal: stopping at once, without finishing the shutdown", "signal", sig.String())
		os.Exit(1)
	}()
}

func loadConfig(path string) (*config.File, error) {
	if path == "" {
		return app.DemoConfig()
	}
	return config.Load(path)
}
