package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/clock"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store"
)

// get answers a GET of path from h.
func get(h http.Handler, path string) (int, string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, strings.TrimSpace(rec.Body.String())
}

// receiveUntil is the notifications on conn up to and including the
// first that has want as one of its lines.
func receiveUntil(t *testing.T, conn *net.UnixConn, want string) []string {
	t.Helper()
	var got []string
	for {
		msg := receive(t, conn)
		got = append(got, msg)
		for line := range strings.SplitSeq(msg, "\n") {
			if line == want {
				return got
			}
		}
	}
}

// TestAppTellsTheServiceManagerAndReadyz: an App started under a service
// manager (NOTIFY_SOCKET, WATCHDOG_USEC) answers /readyz 200 once
// started, sends READY=1 when it serves and WATCHDOG=1 while its
// supervisor answers, and on Shutdown answers /readyz 503 and sends
// STOPPING=1, after which its health checks have ended; /healthz answers
// 200 throughout.
func TestAppTellsTheServiceManagerAndReadyz(t *testing.T) {
	is := is.New(t)
	path := notifyPath(t)
	conn := listenNotify(t, path)
	t.Setenv("NOTIFY_SOCKET", path)
	t.Setenv("WATCHDOG_USEC", "100000") // a ping every 50 ms
	t.Setenv("WATCHDOG_PID", "")

	cfg := &config.File{Version: 1, Server: config.Server{Store: config.Store{Root: t.TempDir()}}}
	opts := DefaultOptions(cfg)
	opts.Store, opts.WarmUp = store.NewMemory(), 0
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := Start(ctx, opts)
	is.NoErr(err)
	h := a.Handler()
	code, body := get(h, "/readyz")
	is.Equal(code, http.StatusOK) // ready once started
	is.Equal(body, `{"status":"ready"}`)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	served := make(chan error, 1)
	go func() { served <- a.Serve(l) }()
	got := receiveUntil(t, conn, notifyReady)
	is.True(strings.HasPrefix(got[0], "STATUS=starting")) // Start said what it does
	is.Equal(got[len(got)-1], "READY=1\nSTATUS=serving on "+l.Addr().String())
	is.Equal(receive(t, conn), notifyWatchdog) // the supervisor answers: pinged
	is.Equal(receive(t, conn), notifyWatchdog) // and again

	sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer scancel()
	is.NoErr(a.Shutdown(sctx))
	is.NoErr(<-served)
	receiveUntil(t, conn, notifyStopping)
	code, body = get(h, "/readyz")
	is.Equal(code, http.StatusServiceUnavailable) // not ready once stopping
	is.Equal(body, `{"status":"stopping"}`)
	code, _ = get(h, "/healthz")
	is.Equal(code, http.StatusOK) // liveness is not readiness
	select {
	case <-a.life.done:
	default:
		is.Fail() // the health checks ended with the App
	}
}

// TestWatchdogIsPingedAtHalfItsTimeout: under WATCHDOG_USEC=200000 the
// health check, and so WATCHDOG=1, comes every 100 ms of the lifecycle's
// clock, not before: a manual clock moves the time, so that the pace is
// checked without measuring a loaded machine's scheduling.
func TestWatchdogIsPingedAtHalfItsTimeout(t *testing.T) {
	is := is.New(t)
	path := notifyPath(t)
	conn := listenNotify(t, path)
	l := newLifecycle(env(map[string]string{"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "200000"}), func(context.Context) error { return nil })
	c := clock.NewManual(time.Unix(0, 0))
	l.clock = c
	l.ready()
	l.serving("127.0.0.1:1")
	defer l.stopping()
	receiveUntil(t, conn, notifyReady)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	const half = 100 * time.Millisecond
	for range 3 {
		is.True(c.WaitFor(ctx, func(pending []time.Duration) bool { return len(pending) == 1 && pending[0] == half })) // the next check is due half the timeout after the last
		is.Equal(c.Advance(half-time.Nanosecond), 0)                                                                   // nothing is due before
		is.Equal(c.Advance(time.Nanosecond), 1)                                                                        // the check is due then
		is.Equal(receive(t, conn), notifyWatchdog)                                                                     // and pings
	}
}

// TestWatchdogIsWithheldWhileUnhealthy: a failing health check sends no
// WATCHDOG=1 and makes /readyz answer 503 unhealthy; a passing one pings
// again and makes it ready.
func TestWatchdogIsWithheldWhileUnhealthy(t *testing.T) {
	is := is.New(t)
	path := notifyPath(t)
	conn := listenNotify(t, path)
	var verdict atomic.Pointer[error]
	failing := errors.New("wedged")
	verdict.Store(&failing)
	asked := make(chan struct{}, 64)
	check := func(context.Context) error {
		select {
		case asked <- struct{}{}:
		default:
		}
		return *verdict.Load()
	}
	l := newLifecycle(env(map[string]string{"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "20000"}), check)
	code, body := get(http.HandlerFunc(l.serveReadyz), "/readyz")
	is.Equal(code, http.StatusServiceUnavailable) // not ready while starting
	is.Equal(body, `{"status":"starting"}`)
	l.ready()
	l.serving("127.0.0.1:1")
	defer l.stopping()
	receiveUntil(t, conn, notifyReady)

	// Three failing checks: no ping.
	for range 3 {
		select {
		case <-asked:
		case <-time.After(5 * time.Second):
			is.Fail() // the health check runs every 10 ms
		}
	}
	is.True(strings.HasPrefix(receive(t, conn), "STATUS=unhealthy")) // said so, and sent no WATCHDOG=1
	code, body = get(http.HandlerFunc(l.serveReadyz), "/readyz")
	is.Equal(code, http.StatusServiceUnavailable)
	is.Equal(body, `{"status":"unhealthy"}`)

	var passing error
	verdict.Store(&passing)
	is.Equal(receive(t, conn), "STATUS=serving") // the next notification: healthy again,
	is.Equal(receive(t, conn), notifyWatchdog)   // then the ping
	code, _ = get(http.HandlerFunc(l.serveReadyz), "/readyz")
	is.Equal(code, http.StatusOK)
}

// TestReadyzSaysWhyTheStoreCannotWrite: a store whose disk is full, or
// that was opened read-only for it, makes /readyz answer 503 with that
// status; one that writes again makes it ready.
func TestReadyzSaysWhyTheStoreCannotWrite(t *testing.T) {
	is := is.New(t)
	d := newDiskSpace(nil)
	l := newLifecycle(env(nil), func(context.Context) error { return nil })
	l.store = d.status
	l.ready()
	code, body := get(http.HandlerFunc(l.serveReadyz), "/readyz")
	is.Equal(code, http.StatusOK)
	is.Equal(body, `{"status":"ready"}`)

	is.True(d.space.Observe(fmt.Errorf("write: %w", store.ErrFull)) != nil)
	code, body = get(http.HandlerFunc(l.serveReadyz), "/readyz")
	is.Equal(code, http.StatusServiceUnavailable)
	is.Equal(body, `{"status":"store_full"}`)

	is.NoErr(d.space.Observe(nil)) // a write succeeds: space is back
	code, _ = get(http.HandlerFunc(l.serveReadyz), "/readyz")
	is.Equal(code, http.StatusOK)

	d.readOnly = true
	code, body = get(http.HandlerFunc(l.serveReadyz), "/readyz")
	is.Equal(code, http.StatusServiceUnavailable)
	is.Equal(body, `{"status":"read_only"}`)
}
