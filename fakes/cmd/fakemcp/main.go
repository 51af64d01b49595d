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
//
// With FAKEMCP_ADD_TOOL=1 the server also has the tool add_tool {name},
// which registers a new tool at runtime and so announces
// notifications/tools/list_changed (see fakes.WithAddTool).
//
// With FAKEMCP_ASK=1 the server also has the tool ask {question,
// rounds?}, which asks the client for input through multi round-trip
// requests (see fakes.WithAsk).
//
// With FAKEMCP_PROMPT=1 the server also has the prompt greet {who}
// (see fakes.WithPrompt).
//
// With FAKEMCP_INIT_DELAY_MS=N it answers initialize only N ms after it
// arrives, so that a test can kill it while its session initializes.
//
// With FAKEMCP_FAULT_FILE=PATH it reads PATH at start: "exit-at-start"
// makes it write why to stderr and exit (status 3) before serving;
// "exit-on-call" makes it serve but do the same on its first tools/call;
// anything else, an empty or a missing file is a healthy server. A test
// fixes the server by changing the file: the next process reads it.
//
// With FAKEMCP_HTTP=HOST:PORT it serves streamable HTTP on that address
// (at any path, e.g. /mcp) instead of stdio, each MCP session with its own
// server (see fakes.NewHTTPHandler), until SIGTERM or SIGINT; with
// FAKEMCP_STATELESS=1 too, it serves without sessions, one server for
// every request, as a server of the stateless era (MCP 2026-07-28) does
// (fakes.NewStatelessHandler).
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
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
	faults, err := readFaults()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakemcp:", err)
		os.Exit(2)
	}
	build := fakes.NewServer
	if os.Getenv("FAKEMCP_ADD_TOOL") != "" {
		build = func() *mcp.Server { return fakes.WithAddTool(fakes.NewServer()) }
	}
	if os.Getenv("FAKEMCP_ASK") != "" {
		base := build
		build = func() *mcp.Server { return fakes.WithAsk(base()) }
	}
	if os.Getenv("FAKEMCP_PROMPT") != "" {
		base := build
		build = func() *mcp.Server { return fakes.WithPrompt(base()) }
	}
	newServer := func() *mcp.Server {
		s := build()
		faults.apply(s)
		return s
	}
	if addr := os.Getenv("FAKEMCP_HTTP"); addr != "" {
		handler := fakes.NewHTTPHandler(newServer)
		if os.Getenv("FAKEMCP_STATELESS") != "" {
			handler = fakes.NewStatelessHandler(newServer)
		}
		if err := serveHTTP(ctx, addr, handler); err != nil {
			fmt.Fprintln(os.Stderr, "fakemcp:", err)
			os.Exit(1)
		}
		return
	}
	if err := newServer().Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "fakemcp:", err)
		os.Exit(1)
	}
	if stubborn {
		time.Sleep(24 * time.Hour) // stdin closed: linger until killed
	}
}

// serveHTTP serves h on addr until ctx ends, then stops within a second.
func serveHTTP(ctx context.Context, addr string, h http.Handler) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := srv.Shutdown(stopCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
