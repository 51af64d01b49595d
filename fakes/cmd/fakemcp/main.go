// Command fakemcp serves the fakes test server (counter, echo, sleep, fail)
// over stdio, for integration tests that need a real subprocess upstream
// with tools the demo server does not have, such as a slow one.
//
// With FAKEMCP_STDERR_ENV=NAME it first writes "NAME=<value>" to stderr,
// as a chatty server would print its configuration, so a test can check
// that a secret environment variable is redacted from mcpflow's logs.
//
// With FAKEMCP_STUBBORN=1 it is a hung server: it ignores SIGTERM and
// SIGINT and does not exit when its stdin closes, so only SIGKILL ends it
// (a graceful close of its session never finishes).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/fakes"
)

func main() {
	stubborn := os.Getenv("FAKEMCP_STUBBORN") != ""
	ctx := context.Background()
	if stubborn {
		signal.Ignore(os.Interrupt, syscall.SIGTERM)
	} else {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	if name := os.Getenv("FAKEMCP_STDERR_ENV"); name != "" {
		fmt.Fprintf(os.Stderr, "fakemcp: %s=%s\n", name, os.Getenv(name))
	}
	if err := fakes.NewServer().Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "fakemcp:", err)
		os.Exit(1)
	}
	if stubborn {
		time.Sleep(24 * time.Hour) // stdin closed: linger until killed
	}
}
