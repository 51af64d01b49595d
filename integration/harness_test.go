// Package integration drives mcpflow end to end: the real WebSocket edge,
// the actor system, the SQLite store and, where a test says so, real
// subprocess MCP servers.
package integration

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/client"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
)

// Executables built once for the tests that run them as subprocesses:
// mcpflow itself and fakemcp, the fakes test server over stdio.
var binary, fakeMCP string

func TestMain(m *testing.M) {
	// Keep routine logs out of test and benchmark output; warnings stay.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	dir, err := os.MkdirTemp("", "mcpflow-integration")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary, fakeMCP = filepath.Join(dir, "mcpflow"), filepath.Join(dir, "fakemcp")
	args := []string{"build", "-o", dir}
	if raceDetector {
		args = append(args, "-race")
		// Inherited by the binaries the tests start.
		_ = os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" "+raceOptions))
	}
	build := exec.Command("go", append(args, "github.com/mcpflow/mcpflow/cmd/mcpflow", "github.com/mcpflow/mcpflow/fakes/cmd/fakemcp")...)
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build test binaries:", err)
		os.Exit(1)
	}
	waitBoundParallel()
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// parallelTests: a test that starts its own mcpflow process (and
// upstreams, a PostgreSQL, a browser) on its own ports and folders, and
// spends its time waiting on those processes, runs in parallel
// (t.Parallel) after the other tests, parallelWaiting at a time. One
// after the other they took the package past go test's 10 minutes in
// .ci/run's README pass. A test stays serial when it runs mcpflow in
// this process (startService), measures this process (goroutines, heap,
// allocations, CPU), times something tightly (keepalives, a hung
// upstream, a kill storm), sets the environment (t.Setenv) or captures
// the log.

// parallelWaiting is how many parallel tests run at once without -race
// unless -parallel says otherwise: they wait on the processes they start
// far more than they compute, so four overlap on two cores where go
// test's default (GOMAXPROCS) would run two. At two, the package took
// 577 s of go test's 600 in .ci/run's README pass (2026-12-07), most of
// it in the parallel tests (861 s of their time against 222 s of the
// serial ones'); at four, 301 s. Under -race, whose binaries compute
// several times more, go test's default stands: at four there, the
// tightly timed tests (the kill storm) starved.
const parallelWaiting = 4

// waitBoundParallel sets -test.parallel to parallelWaiting, without
// -race, when the command line did not set it.
func waitBoundParallel() {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set && !raceDetector {
		_ = flag.Set("test.parallel", strconv.Itoa(parallelWaiting))
	}
}

// service is one mcpflow started in-process on a loopback port.
type service struct {
	URL string
	app *app.App
}

// startService starts mcpflow with a SQLite store in a temporary root,
// the given sources, and transports (nil: the real stdio and HTTP ones).
func startService(t testing.TB, transports session.TransportFactory, sources ...config.Connection) *service {
	return startServiceWith(t, nil, transports, sources...)
}

// startServiceWith is startService with a given store (nil: SQLite).
func startServiceWith(t testing.TB, st store.Store, transports session.TransportFactory, sources ...config.Connection) *service {
	t.Helper()
	return startServiceTuned(t, func(o *app.Options) { o.Store, o.Transports = st, transports }, sources...)
}

// startServiceTuned is startService with the default options for the
// config of sources as tune changes them (a store, transports, session
// bounds such as the keepalive).
func startServiceTuned(t testing.TB, tune func(*app.Options), sources ...config.Connection) *service {
	t.Helper()
	return startServiceListening(t, tune, nil, sources...)
}

// startServiceListening is startServiceTuned serving on a loopback
// listener as wrap makes it (nil: as it is), e.g. smallSendBuffers.
func startServiceListening(t testing.TB, tune func(*app.Options), wrap func(net.Listener) net.Listener, sources ...config.Connection) *service {
	t.Helper()
	is := is.New(t)
	is.Helper()
	cfg := &config.File{Version: 1, Server: config.Server{Store: config.Store{Root: t.TempDir()}, Sources: sources}}
	is.NoErr(cfg.Validate())
	opts := app.DefaultOptions(cfg)
	tune(&opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := app.Start(ctx, opts)
	is.NoErr(err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	if wrap != nil {
		l = wrap(l)
	}
	served := make(chan error, 1)
	go func() { served <- a.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		is := is.NewRelaxed(t)    // a failed shutdown still waits for Serve
		is.NoErr(a.Shutdown(ctx)) // shut the app down
		is.NoErr(<-served)        // Serve returns cleanly
	})
	return &service{URL: "ws://" + l.Addr().String() + "/ws", app: a}
}

// dial connects a Go client, closed at cleanup.
func (s *service) dial(t testing.TB) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, s.URL)
	is.New(t).NoErr(err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// testContext is a context bounded for one test step.
func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func stdioSource(id, command string, args ...string) config.Connection {
	return config.Connection{Kind: "mcp", ID: id, Transport: config.Transport{Kind: config.TransportStdio, Command: command, Args: args}}
}
