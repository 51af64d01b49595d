package session_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// dialCounter is a streamable HTTP MCP endpoint that counts the TCP
// connections opened to it, and those serving a request now. While a
// wave is expected, it holds each tools/call until the wave's calls are
// all in.
type dialCounter struct {
	*httptest.Server
	opened atomic.Int64
	open   atomic.Int64 // connections not closed yet
	mu     sync.Mutex
	active map[net.Conn]bool

	wave    int               // the calls of the wave expected; 0: none
	arrived int               // of them, those in
	all     chan struct{}     // closed once they are all in
	used    map[net.Conn]bool // the connections they came on
}

// connKey is the request context's key of the connection a request came on.
type connKey struct{}

// newDialCounter serves the fake server with opts (nil: go-sdk's
// defaults, answers as SSE streams).
func newDialCounter(t *testing.T, opts *mcp.StreamableHTTPOptions) *dialCounter {
	server := fakes.NewServer()
	d := &dialCounter{active: map[net.Conn]bool{}}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, opts)
	d.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"tools/call"`)) {
				d.hold(r)
			}
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	d.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, c)
	}
	d.Config.ConnState = func(c net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			d.opened.Add(1)
			d.open.Add(1)
		case http.StateClosed, http.StateHijacked:
			d.open.Add(-1)
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		if s == http.StateActive {
			d.active[c] = true
		} else {
			delete(d.active, c)
		}
	}
	d.Start()
	t.Cleanup(d.Close)
	return d
}

// expect holds the next n calls until all n are in.
func (d *dialCounter) expect(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.wave, d.arrived, d.all, d.used = n, 0, make(chan struct{}), map[net.Conn]bool{}
}

// usedByWave is how many connections the last wave's calls came on.
func (d *dialCounter) usedByWave() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.used)
}

// hold holds call r, while a wave is expected, until the wave's calls are
// all in (or r is cancelled: its session gave up on it).
func (d *dialCounter) hold(r *http.Request) {
	d.mu.Lock()
	all := d.all
	if d.wave > 0 {
		d.used[r.Context().Value(connKey{}).(net.Conn)] = true
		d.arrived++
		if d.arrived == d.wave {
			close(d.all)
			d.wave = 0
		}
	}
	d.mu.Unlock()
	if all == nil {
		return
	}
	select {
	case <-all:
	case <-r.Context().Done():
	}
}

// awaitQuiet waits until at most n connections serve a request (the
// session's standing GET stream is one), so that the calls' connections
// are back in the client's pool, or nearly.
func (d *dialCounter) awaitQuiet(t *testing.T, n int) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	var active int
	if !poll.Until(patience, func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		active = len(d.active)
		return active <= n
	}) {
		t.Logf("%d connections still serving after %s", active, patience)
		is.Fail() // the calls' connections go idle
	}
}

// calls is how many calls a wave makes at once: the session's cap.
const calls = 32

// wave is what one wave of calls used: the connections its calls came
// on, and of them those it opened.
type wave struct{ used, opened int64 }

// connectionsPerWave opens one session to a fresh endpoint through
// factory, runs two waves of 32 calls on it, all in flight at once (the
// endpoint holds each until all are in), and returns what each found and
// opened. The endpoint answers in JSON, not SSE: go-sdk sends a call's
// POST under the call's context and cancels it once the call returns,
// which can cut short the drain of an SSE answer and close a connection
// that would have been pooled; a JSON answer is read to its end first.
func connectionsPerWave(t *testing.T, factory session.HTTP) (first, second wave) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	upstream := newDialCounter(t, &mcp.StreamableHTTPOptions{JSONResponse: true})
	conn := config.Connection{Kind: "mcp", ID: connID, Transport: config.Transport{Kind: config.TransportHTTP, URL: upstream.URL}}
	e := newEngine(t)
	pid := e.Spawn(session.New(conn, factory, testOptions()), "session")
	t.Cleanup(func() { stop(t, e, pid) })
	mustCall(t, e, pid, "counter", nil) // the session is open

	run := func() wave {
		upstream.awaitQuiet(t, 1) // the notification stream serves; the rest are idle
		before := upstream.opened.Load()
		upstream.expect(calls)
		waiters := make([]*reply.Expected[session.ToolResult], calls)
		for i := range waiters {
			waiters[i] = send(e, pid, "echo", map[string]any{"message": "hi"}, patience)
		}
		for _, w := range waiters {
			is.NoErr(await(t, w).Error.Err())
		}
		return wave{used: int64(upstream.usedByWave()), opened: upstream.opened.Load() - before}
	}
	return run(), run()
}

func TestAnHTTPSessionReusesItsConnectionsForConcurrentCalls(t *testing.T) {
	is := is.New(t)
	first, second := connectionsPerWave(t, session.HTTP{})
	// http.DefaultTransport's own settings, for comparison: 2 idle
	// connections per host.
	defaults := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	dfirst, dsecond := connectionsPerWave(t, session.HTTP{Client: defaults})
	t.Logf("%d calls at once, connections used / opened, first wave, second wave: session pool %v, %v; http.DefaultTransport settings %v, %v",
		calls, first, second, dfirst, dsecond)
	is.Equal(first.used, int64(calls))                      // the first wave's calls are in flight together, on a connection each
	is.Equal(second, wave{used: calls, opened: 0})          // the session's pool keeps them all, and the second wave reuses them
	is.Equal(dfirst.used, int64(calls))                     // so with the default settings,
	is.Equal(dsecond, wave{used: calls, opened: calls - 2}) // which keep 2 idle, and open the rest again
}

// The endpoint answers in JSON, as connectionsPerWave's does: with SSE
// answers, go-sdk's cancel of a call's POST once the call returned could
// cut the drain of its answer short and close the connection, so that a
// pool each held from 8 to 14 (under -race and load, 2026-12-02).
func TestIdleSessionsOfASharedPoolHoldNoConnectionButTheirStream(t *testing.T) {
	is := is.New(t)
	const sessions = 6
	held := func(factory session.HTTP) int64 {
		upstream := newDialCounter(t, &mcp.StreamableHTTPOptions{JSONResponse: true})
		conn := config.Connection{Kind: "mcp", ID: connID, Transport: config.Transport{Kind: config.TransportHTTP, URL: upstream.URL}}
		e := newEngine(t)
		for i := range sessions {
			pid := e.Spawn(session.New(conn, factory, testOptions()), "session", actor.WithID(fmt.Sprint(i)))
			t.Cleanup(func() { stop(t, e, pid) })
			mustCall(t, e, pid, "counter", nil) // open, then idle
		}
		upstream.awaitQuiet(t, sessions) // only the notification streams serve
		return upstream.open.Load()
	}
	pool := session.NewPool()
	t.Cleanup(pool.Close)
	shared, own := held(session.HTTP{Pool: pool}), held(session.HTTP{})
	t.Logf("TCP connections held by %d idle sessions: shared pool %d, a pool each %d", sessions, shared, own)
	is.True(shared <= sessions+2)    // a stream each, and the few the pool keeps for all
	is.Equal(own, int64(2*sessions)) // a stream and an idle connection each
}

func TestASessionThatDoesNotListenHoldsNoConnectionWhenIdle(t *testing.T) {
	is := is.New(t)
	upstream := newDialCounter(t, nil)
	pool := session.NewPool()
	t.Cleanup(pool.Close)
	conn := config.Connection{Kind: "mcp", ID: connID, Transport: config.Transport{Kind: config.TransportHTTP, URL: upstream.URL}}
	opts := testOptions()
	opts.NoListen = true
	e := newEngine(t)
	pid := e.Spawn(session.New(conn, session.HTTP{Pool: pool}, opts), "session")
	t.Cleanup(func() { stop(t, e, pid) })
	is.Equal(mustCall(t, e, pid, "counter", nil)["count"], float64(1))
	upstream.awaitQuiet(t, 0)                                          // no notification stream serves
	is.Equal(mustCall(t, e, pid, "counter", nil)["count"], float64(2)) // the session works on
}
