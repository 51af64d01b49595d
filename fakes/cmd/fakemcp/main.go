// Command fakemcp serves the fakes test server (counter, echo, sleep, fail)
// over stdio, for integration tests that need a real subprocess upstream
// with tools the demo server does not have, such as a slow one.
//
// With FAKEMCP_STDERR_ENV=NAME it first writes "NAME=<value>" to stderr,
// as a chatty server would print its configuration, so a test can check
// that a secret environment variable is redacted from mcpflow's logs.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/fakes"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if name := os.Getenv("FAKEMCP_STDERR_ENV"); name != "" {
		fmt.Fprintf(os.Stderr, "fakemcp: %s=%s\n", name, os.Getenv(name))
	}
	if err := fakes.NewServer().Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "fakemcp:", err)
		os.Exit(1)
	}
}
