package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session/reap"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/demoserver"
)

// serveFlags are the flags of `mcpflow serve`.
type serveFlags struct {
	configPath      string
	listen          string
	logLevel        string
	logFormat       string
	runWait         time.Duration
	maxSteps        int
	runTimeout      time.Duration
	shutdownTimeout time.Duration
	origins         []string
	insecure        bool
}

func newServeCommand() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:     "serve",
		Example: "  mcpflow serve\n  mcpflow serve --config mcpflow.json --listen 127.0.0.1:8765",
		Short:   "Run the mcpflow service",
		Long: `Run the mcpflow service: the JSON-RPC API on /ws (WebSocket) and /rpc
(HTTP POST), and /healthz.

Without --config it keeps its records under ./.mcpflow and offers one
source, demo.default: this binary run as 'mcpflow demo-server', a small
stdio MCP server with session-local tools.

With no access token configured it serves loopback clients only, and
refuses a non-loopback --listen unless --insecure-no-auth.

SIGTERM or SIGINT stops it gracefully within --shutdown-timeout; a second
signal stops it at once. Started by "go run", it also stops when the go
command does.`,
		Args:    cobra.NoArgs,
		GroupID: groupServer,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			stopWithGoRun()
			return serve(ctx, f)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.configPath, "config", "", "config file (default: the embedded demo config)")
	fs.StringVar(&f.listen, "listen", "127.0.0.1:8765", "address to listen on")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fs.DurationVar(&f.runWait, "run-wait", 2*time.Minute, "how long workflow.runs.start waits for a run to finish before answering with its running state")
	fs.IntVar(&f.maxSteps, "max-steps", workflow.DefaultMaxSteps, "step budget of each run, unless its deployment sets limits.max_steps; at most server.limits.max_steps")
	fs.DurationVar(&f.runTimeout, "run-timeout", time.Hour, "overall deadline of each run from its start or resume (0: none), unless its deployment sets limits.run_timeout_seconds")
	fs.DurationVar(&f.shutdownTimeout, "shutdown-timeout", app.DefaultShutdownTimeout, "how long a stop on SIGTERM or SIGINT may take; steps in flight get what the sessions' and the store's shares (5 s) leave of it to finish (a second signal stops at once)")
	fs.StringArrayVar(&f.origins, "allow-origin", nil, "a browser origin (scheme://host[:port]) allowed besides loopback ones; repeat for more")
	fs.BoolVar(&f.insecure, "insecure-no-auth", false, "serve a non-loopback address without access tokens: anyone who can connect may deploy and run any tool")
	_ = cmd.RegisterFlagCompletionFunc("log-level", fixedCompletion("debug", "info", "warn", "error"))
	_ = cmd.RegisterFlagCompletionFunc("log-format", fixedCompletion("text", "json"))
	_ = cmd.MarkFlagFilename("config", "json")
	return cmd
}

// serve runs the service until ctx is done, then shuts it down within
// the shutdown timeout.
func serve(ctx context.Context, f serveFlags) error {
	if f.shutdownTimeout <= 0 {
		return errors.New("--shutdown-timeout must be positive")
	}
	logger, err := newLogger(f.logLevel, f.logFormat)
	if err != nil {
		return err
	}
	slog.SetDefault(logger)

	cfg, err := loadConfig(f.configPath)
	if err != nil {
		return err
	}
	opts := app.DefaultOptions(cfg)
	opts.RunWait, opts.MaxSteps, opts.RunTimeout = f.runWait, f.maxSteps, f.runTimeout
	if opts.Edge.Guard, opts.Edge.Gate, err = app.Access(cfg, f.origins); err != nil {
		return err
	}
	if err := access.CheckExposure(f.listen, opts.Edge.Guard, f.insecure); err != nil {
		return err
	}
	switch {
	case !opts.Edge.Guard.Enabled() && access.IsLoopbackListen(f.listen):
		slog.Info("no access tokens configured: serving loopback clients only, each with every scope", "listen", f.listen)
	case !opts.Edge.Guard.Enabled():
		slog.Warn("--insecure-no-auth: serving without access tokens on a non-loopback address; anyone who can connect may deploy and run any tool", "listen", f.listen)
	}
	opts.Supervisor.Session.StdioReaper = reap.Self()
	stopAtSecondSignal()
	// Bound first: a serve that cannot listen touches no store.
	l, err := net.Listen("tcp", f.listen)
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
	sctx, cancel := context.WithTimeout(context.Background(), f.shutdownTimeout)
	defer cancel()
	stopped := a.Shutdown(sctx)
	if errors.Is(stopped, app.ErrStopCutShort) {
		stopped = nil // each stage cut short was logged; nothing acknowledged was lost: exit 0
	}
	return errors.Join(err, stopped)
}

// newLogger is the slog logger of --log-level and --log-format, writing
// to stderr.
func newLogger(level, format string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	default:
		return nil, fmt.Errorf("--log-format: %q is neither text nor json", format)
	}
}

// stopAtSecondSignal exits at once on the second SIGTERM or SIGINT: the
// first one begins the graceful shutdown (through serve's context), and
// the store keeps whatever was committed.
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

func newDemoServerCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "demo-server",
		Example: "  mcpflow demo-server   # an MCP host launches it; serve starts it as demo.default",
		Short:   "Serve the demo MCP server over stdio",
		Long: `Serve the demo MCP server over stdin and stdout: a small MCP server with
session-local tools (counter, kv_set, kv_get, echo). serve without --config
runs it as the source demo.default.`,
		Args:    cobra.NoArgs,
		GroupID: groupServer,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return demoserver.Run(ctx)
		},
	}
}

// newReapCommand is the hidden reaper serve puts between itself and each
// stdio server (package reap). serve execs it with reap's own flag syntax,
// so its words pass through untouched, and no signal handling is set up
// before it runs.
func newReapCommand() *cobra.Command {
	return &cobra.Command{
		Use:                reap.Subcommand,
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			if code := reap.Main(args); code != 0 {
				return withCode(code, nil)
			}
			return nil
		},
	}
}

// fixedCompletion completes a flag from a fixed list of values.
func fixedCompletion(values ...string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}
