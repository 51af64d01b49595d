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
	"syscall"
	"time"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/demoserver"
)

const usage = `usage:
  mcpflow serve [--config FILE] [--listen 127.0.0.1:8765] [--run-wait 2m] [--max-steps 10000] [--run-timeout 1h] [--log-level info]
  mcpflow demo-server`

func main() {
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
	if err := fs.Parse(args); err != nil {
		return err
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
	a, err := app.Start(ctx, opts)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		_ = a.Shutdown(context.Background())
		return fmt.Errorf("listen: %w", err)
	}
	served := make(chan error, 1)
	go func() { served <- a.Serve(l) }()
	select {
	case err = <-served:
	case <-ctx.Done():
		slog.Info("shutting down")
	}
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return errors.Join(err, a.Shutdown(sctx))
}

func loadConfig(path string) (*config.File, error) {
	if path == "" {
		return app.DemoConfig()
	}
	return config.Load(path)
}
