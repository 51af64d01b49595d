package edge_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/api/contract"
	"github.com/mcpflow/mcpflow/api/edge"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/rpc"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// startWith serves methods with opts, like start.
func startWith(t testing.TB, methods map[string]rpc.Handler, opts edge.Options) (*edge.Server, *httptest.Server) {
	t.Helper()
	return serveTable(t, open(methods), opts)
}

// serveTable serves a method table with opts, like start.
func serveTable(t testing.TB, table map[string]rpc.Method, opts edge.Options) (*edge.Server, *httptest.Server) {
	t.Helper()
	srv := edge.New(table, contract.Default(), opts)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	t.Cleanup(srv.Close)
	return srv, hs
}

// ctxErr waits for a slow handler to see its context end.
func (f *fixture) ctxErr(t testing.TB) error {
	t.Helper()
	select {
	case err := <-f.ctxErrs:
		return err
	case <-time.After(wait):
		t.Log("no handler context ended in time")
		is.New(t).Fail()
		return nil
	}
}

func batchOf(n int, method, params string) string {
	entries := make([]string, n)
	for i := range entries {
		entries[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, i, method, params)
	}
	return "[" + strings.Join(entries, ",") + "]"
}

// smallBuffers gives every accepted connection a small send buffer, so
// that the server backs up after little data to a client that does not
// read.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(16 << 10)
	}
	return c, err
}

// startSmall is start with small server send buffers.
func startSmall(t testing.TB, f *fixture, opts edge.Options) (*edge.Server, *httptest.Server) {
	t.Helper()
	srv := edge.New(open(f.methods()), contract.Default(), opts)
	hs := httptest.NewUnstartedServer(srv.Handler())
	hs.Listener = smallBuffers{hs.Listener}
	hs.Start()
	t.Cleanup(hs.Close)
	t.Cleanup(srv.Close)
	return srv, hs
}

// dialSmall dials with a small TCP receive buffer, so that a client that
// does not read backs the server up after little data.
func dialSmall(t testing.TB, hs *httptest.Server, rcvbuf int) *rawConn {
	t.Helper()
	is := is.New(t)
	is.Helper()
	d := websocket.Dialer{NetDial: func(network, addr string) (net.Conn, error) {
		c, err := net.Dial(network, addr)
		if err != nil {
			return nil, err
		}
		_ = c.(*net.TCPConn).SetReadBuffer(rcvbuf)
		return c, nil
	}}
	ws, resp, err := d.Dial(wsURL(hs), nil)
	is.NoErr(err) // dial the edge
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = ws.Close() })
	return &rawConn{t: t, is: is, ws: ws}
}

// TestABatchAtTheLimitIsAnsweredInFullOnAnIdleServer: a batch of MaxBatch
// (100) entries, above MaxInFlight (64), is answered entry by entry, in
// frame order, with no -32000: entries wait for slots.
func TestABatchAtTheLimitIsAnsweredInFullOnAnIdleServer(t *testing.T) {
	f := newFixture()
	opts := testOptions()
	is.New(t).True(opts.MaxBatch > opts.MaxInFlight)
	_, hs := start(t, f, opts)
	frame := batchOf(opts.MaxBatch, "test.echo", `{"n":1}`)
	check := func(t *testing.T, data []byte) {
		is := is.New(t)
		var replies []response
		is.NoErr(json.Unmarshal(data, &replies))
		is.Equal(len(replies), opts.MaxBatch)
		for i, r := range replies {
			is.Equal(r.Error, nil)                // no entry refused
			is.Equal(string(r.ID), fmt.Sprint(i)) // frame order
		}
	}
	t.Run("ws", func(t *testing.T) {
		c := dial(t, hs)
		c.send(frame)
		check(t, c.recvRaw())
	})
	t.Run("rpc", func(t *testing.T) {
		_, _, body := post(t, hs, frame)
		check(t, body)
	})
	is.New(t).True(f.maxRunning.Load() <= int64(opts.MaxInFlight))
}

// TestAWaitForASlotEndsAtTheRequestDeadline: a request that finds no
// slot free waits, but only until its deadline; then -32000.
func TestAWaitForASlotEndsAtTheRequestDeadline(t *testing.T) {
	is := is.New(t)
	f := newFixture()
	opts := testOptions()
	opts.MaxInFlight = 1
	opts.RequestTimeout = 100 * time.Millisecond
	_, hs := start(t, f, opts)
	c := dial(t, hs)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"test.stuck"}`) // ignores its deadline
	f.waitStarted(t, 1)
	r := c.call(`2`, "test.fast", "")
	is.Equal(code(r), jsonrpc.Overloaded)
	is.True(strings.Contains(string(r.Error.Data), "no in-flight slot")) // says why
	close(f.release)
	r = c.recv()
	is.Equal(string(r.ID), "1")
	is.Equal(c.call(`3`, "test.fast", "").Error, nil) // the slot is free again
}

// TestASlowReaderIsReadNoFasterThanItReads: while the outbound queue is at
// its bound the connection is not read, so what the server holds for a
// slow reader stays bounded; nothing is lost.
func TestASlowReaderIsReadNoFasterThanItReads(t *testing.T) {
	is := is.New(t)
	f := newFixture()
	opts := testOptions()
	opts.MaxInFlight = 4
	opts.MaxOutboundMessages = 4
	opts.MaxOutboundBytes = 128 << 10
	var conn atomic.Pointer[edge.Conn]
	var maxCount, maxBytes atomic.Int64
	f.onEcho = func(ctx context.Context) {
		c := edge.ConnFrom(ctx)
		conn.Store(c)
		n, b := edge.OutboxStats(c)
		for m := maxCount.Load(); int64(n) > m && !maxCount.CompareAndSwap(m, int64(n)); m = maxCount.Load() {
		}
		for m := maxBytes.Load(); b > m && !maxBytes.CompareAndSwap(m, b); m = maxBytes.Load() {
		}
	}
	_, hs := startSmall(t, f, opts)
	c := dialSmall(t, hs, 32<<10)
	const n = 30 // 1.8 MiB of replies: more than the socket buffers hold
	pad := strings.Repeat("x", 60<<10)
	sent := make(chan error, 1)
	go func() { // the writes block once the server stops reading
		for i := range n {
			_ = c.ws.SetWriteDeadline(time.Now().Add(wait))
			if err := c.ws.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"test.echo","params":{"pad":%q}}`, i, pad)); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	poll.For(t, "the outbound queue reaches its bound", wait, func() bool {
		if conn.Load() == nil {
			return false
		}
		n, b := edge.OutboxStats(conn.Load())
		return n >= opts.MaxOutboundMessages || b >= opts.MaxOutboundBytes
	})
	calls := f.calls.Load()
	is.True(calls < n) // the server stopped reading before it had every request
	seen := map[string]bool{}
	for range n {
		r := c.recv()
		is.Equal(r.Error, nil)
		seen[string(r.ID)] = true
	}
	is.NoErr(<-sent)
	is.Equal(len(seen), n) // every request answered once
	reply := int64(len(pad)) + 100
	t.Logf("requests handled when the queue was full: %d of %d; queue peak seen by handlers: %d messages, %d KiB (bounds %d, %d KiB)",
		calls, n, maxCount.Load(), maxBytes.Load()>>10, opts.MaxOutboundMessages, opts.MaxOutboundBytes>>10)
	is.True(maxCount.Load() <= int64(opts.MaxOutboundMessages+opts.MaxInFlight))      // at most the bound plus the requests in flight
	is.True(maxBytes.Load() <= opts.MaxOutboundBytes+int64(opts.MaxInFlight+1)*reply) // likewise in bytes
}

// TestAClientThatNeverReadsIsDroppedAfterTheWriteTimeout: the writer gives
// up after WriteTimeout, which ends the connection: the handlers see their
// context cancelled and every goroutine of the connection returns.
func TestAClientThatNeverReadsIsDroppedAfterTheWriteTimeout(t *testing.T) {
	is := is.New(t)
	f := newFixture()
	opts := testOptions()
	opts.WriteTimeout = 100 * time.Millisecond
	srv, hs := startSmall(t, f, opts)
	c := dialSmall(t, hs, 32<<10)
	c.send(`{"jsonrpc":"2.0","id":0,"method":"test.slow"}`)
	f.waitStarted(t, 1)
	pad := strings.Repeat("x", 60<<10)
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for i := 1; ; i++ { // until the server drops the connection
			_ = c.ws.SetWriteDeadline(time.Now().Add(wait))
			if c.ws.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"test.echo","params":{"pad":%q}}`, i, pad)) != nil {
				return
			}
		}
	}()
	is.True(errors.Is(f.ctxErr(t), context.Canceled))                                                          // the slow handler's context was cancelled
	poll.For(t, "the connection's goroutines return", wait, func() bool { return edge.OpenClients(srv) == 0 }) // serve returned
	_ = c.ws.Close()
	<-sent
	t.Logf("echo calls before the drop: %d", f.calls.Load())
}

// TestAConnectionsEndCancelsItsContext: a peer's close and a missing pong
// both cancel the handlers in flight.
func TestAConnectionsEndCancelsItsContext(t *testing.T) {
	t.Run("peer close", func(t *testing.T) {
		is := is.New(t)
		f := newFixture()
		srv, hs := start(t, f, testOptions())
		c := dial(t, hs)
		c.send(`{"jsonrpc":"2.0","id":1,"method":"test.slow"}`)
		f.waitStarted(t, 1)
		is.NoErr(c.ws.Close())
		is.True(errors.Is(f.ctxErr(t), context.Canceled))
		poll.For(t, "the connection's goroutines return", wait, func() bool { return edge.OpenClients(srv) == 0 })
	})
	t.Run("pong timeout", func(t *testing.T) {
		is := is.New(t)
		f := newFixture()
		opts := testOptions()
		opts.PingInterval = 10 * time.Millisecond
		opts.PongWait = 50 * time.Millisecond
		srv, hs := start(t, f, opts)
		c := dial(t, hs)
		c.send(`{"jsonrpc":"2.0","id":1,"method":"test.slow"}`)
		f.waitStarted(t, 1)
		_, _, _ = pinged(c, true) // reads, never answers a ping
		is.True(errors.Is(f.ctxErr(t), context.Canceled))
		poll.For(t, "the connection's goroutines return", wait, func() bool { return edge.OpenClients(srv) == 0 })
	})
}

// TestConnectionsPerClientAreCapped: beyond MaxConnsPerClient, upgrades
// and POSTs from the same address get 429 with a -32000 body, until one
// ends.
func TestConnectionsPerClientAreCapped(t *testing.T) {
	is := is.New(t)
	opts := testOptions()
	opts.MaxConnsPerClient = 2
	srv, hs := start(t, newFixture(), opts)
	first := dial(t, hs)
	dial(t, hs)
	ws, resp, err := websocket.DefaultDialer.Dial(wsURL(hs), nil)
	if ws != nil {
		_ = ws.Close()
	}
	is.Equal(err, websocket.ErrBadHandshake)
	is.Equal(resp.StatusCode, http.StatusTooManyRequests)
	body, err := io.ReadAll(resp.Body)
	is.NoErr(err)
	_ = resp.Body.Close()
	r := decode(t, body)
	is.Equal(code(r), jsonrpc.Overloaded)
	is.Equal(string(r.ID), "null")

	status, _, body := post(t, hs, `{"jsonrpc":"2.0","id":1,"method":"test.fast"}`)
	is.Equal(status, http.StatusTooManyRequests) // POSTs count too
	is.Equal(code(decode(t, body)), jsonrpc.Overloaded)

	_ = first.ws.Close()
	poll.For(t, "a freed place admits a new connection", wait, func() bool {
		ws, resp, err := websocket.DefaultDialer.Dial(wsURL(hs), nil)
		if resp != nil {
			_ = resp.Body.Close()
		}
		if err != nil {
			return false
		}
		_ = ws.Close()
		return true
	})
	_ = srv
}

// TestRPCRequestsShareTheirClientsInFlightSlots: POSTs from one address
// share MaxInFlight slots; one beyond them waits and is answered.
func TestRPCRequestsShareTheirClientsInFlightSlots(t *testing.T) {
	is := is.New(t)
	f := newFixture()
	opts := testOptions()
	opts.MaxInFlight = 1
	_, hs := start(t, f, opts)
	bodies := make(chan []byte, 2)
	go func() {
		_, _, body := post(t, hs, `{"jsonrpc":"2.0","id":1,"method":"test.stuck"}`)
		bodies <- body
	}()
	f.waitStarted(t, 1)
	go func() {
		_, _, body := post(t, hs, `{"jsonrpc":"2.0","id":2,"method":"test.echo","params":{}}`)
		bodies <- body
	}()
	is.Equal(f.calls.Load(), int64(0)) // the second has not run while the first holds the slot
	close(f.release)
	got := map[string]bool{}
	for range 2 {
		r := decode(t, <-bodies)
		is.Equal(r.Error, nil) // waited, not refused
		got[string(r.ID)] = true
	}
	is.Equal(len(got), 2)
	is.True(f.maxRunning.Load() <= 1)
}

// TestRPCBodyMustArriveInTime: a body slower than BodyTimeout gets 408
// and the connection is closed.
func TestRPCBodyMustArriveInTime(t *testing.T) {
	is := is.New(t)
	opts := testOptions()
	opts.BodyTimeout = 100 * time.Millisecond
	srv, hs := start(t, newFixture(), opts)
	conn, err := net.Dial("tcp", strings.TrimPrefix(hs.URL, "http://"))
	is.NoErr(err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /rpc HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":")
	is.NoErr(err)
	is.NoErr(conn.SetReadDeadline(time.Now().Add(wait)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	is.NoErr(err) // answered without the rest of the body
	_ = resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusRequestTimeout)
	poll.For(t, "the request leaves", wait, func() bool { return edge.OpenClients(srv) == 0 })
}

// capped returns table with method bounded to n calls at once, named
// busy in the refusal.
func capped(table map[string]rpc.Method, method string, n int, busy string) map[string]rpc.Method {
	m := table[method]
	m.MaxConcurrent, m.Busy = n, busy
	table[method] = m
	return table
}

// TestConcurrentRunsAreCapped: workflow.runs.start beyond the
// MaxConcurrent of its table entry (the service sets it from
// max_concurrent_runs) is answered -32000 at once, over either transport.
func TestConcurrentRunsAreCapped(t *testing.T) {
	is := is.New(t)
	f := newFixture()
	_, hs := serveTable(t, capped(open(f.methods()), "workflow.runs.start", 1, "runs starting"), testOptions())
	c := dial(t, hs)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"workflow.runs.start","params":{"deployment_id":"d1"}}`)
	f.waitStarted(t, 1)
	r := c.call(`2`, "workflow.runs.start", `{"deployment_id":"d1"}`)
	is.Equal(code(r), jsonrpc.Overloaded)
	is.True(strings.Contains(string(r.Error.Data), "too many runs"))
	_, _, body := post(t, hs, `{"jsonrpc":"2.0","id":3,"method":"workflow.runs.start","params":{"deployment_id":"d1"}}`)
	is.Equal(code(decode(t, body)), jsonrpc.Overloaded) // a server-wide cap
	r = c.call(`4`, "workflow.runs.start", `{}`)
	is.Equal(code(r), jsonrpc.InvalidParams) // params are checked first
	close(f.release)
	r = c.recv()
	is.Equal(string(r.ID), "1")
	is.Equal(r.Error, nil)
	is.Equal(c.call(`5`, "workflow.runs.start", `{"deployment_id":"d1"}`).Error, nil) // the slot is free again
}

// TestAnyMethodMayBeCapped: the bound is the table entry's, applied to
// whichever method has one, each method's places its own; without a Busy
// the refusal names the method's calls.
func TestAnyMethodMayBeCapped(t *testing.T) {
	is := is.New(t)
	f := newFixture()
	table := capped(capped(open(f.methods()), "test.slow", 1, ""), "workflow.runs.start", 1, "runs starting")
	_, hs := serveTable(t, table, testOptions())
	c := dial(t, hs)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"test.slow"}`)
	f.waitStarted(t, 1)
	r := c.call(`2`, "test.slow", "")
	is.Equal(code(r), jsonrpc.Overloaded)
	is.True(strings.Contains(string(r.Error.Data), "too many test.slow calls at once: 1 test.slow calls in progress, the limit"))
	c.send(`{"jsonrpc":"2.0","id":3,"method":"workflow.runs.start","params":{"deployment_id":"d1"}}`)
	f.waitStarted(t, 1)                               // its place is not test.slow's
	is.Equal(c.call(`4`, "test.fast", "").Error, nil) // an uncapped method is not bounded
	close(f.release)
	seen := map[string]bool{}
	for range 2 {
		r := c.recv()
		is.Equal(r.Error, nil)
		seen[string(r.ID)] = true
	}
	is.Equal(seen, map[string]bool{"1": true, "3": true})
}

// TestHandlersPushNotificationsThroughTheWriter: a handler's notification
// goes out through the connection's one writer, before its reply.
func TestHandlersPushNotificationsThroughTheWriter(t *testing.T) {
	is := is.New(t)
	_, hs := start(t, newFixture(), testOptions())
	c := dial(t, hs)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"test.push","params":{"x":1}}`)
	is.Equal(string(c.recvRaw()), `{"jsonrpc":"2.0","method":"test.note","params":{"x":1}}`)
	r := c.recv()
	is.Equal(string(r.Result), `"pushed"`)
	_, _, body := post(t, hs, `{"jsonrpc":"2.0","id":2,"method":"test.push","params":{}}`)
	is.Equal(string(decode(t, body).Result), `"no connection"`) // /rpc has no connection to push to
}

// TestTryNotifyStopsAtTheBoundAndDropsNothing: TryNotify refuses once the
// outbound queue is full; everything it accepted is delivered.
func TestTryNotifyStopsAtTheBoundAndDropsNothing(t *testing.T) {
	is := is.New(t)
	f := newFixture()
	methods := f.methods()
	methods["test.flood"] = func(ctx context.Context, _ json.RawMessage) (any, error) {
		c := edge.ConnFrom(ctx)
		pad := strings.Repeat("y", 32<<10)
		for n := 0; n < 100_000; n++ {
			err := c.TryNotify("test.note", map[string]any{"n": n, "pad": pad})
			if errors.Is(err, edge.ErrOutboundFull) {
				return n, nil
			}
			if err != nil {
				return nil, err
			}
		}
		return nil, errors.New("never full")
	}
	opts := testOptions()
	opts.MaxOutboundMessages = 8
	_, hs := startWith(t, methods, opts)
	c := dial(t, hs)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"test.flood"}`)
	notes := 0
	for {
		data := c.recvRaw()
		var msg struct {
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
		}
		is.NoErr(json.Unmarshal(data, &msg))
		if msg.Method == "" {
			var pushed int
			is.NoErr(json.Unmarshal(msg.Result, &pushed))
			is.Equal(notes, pushed) // every accepted notification arrived, before the reply
			t.Logf("notifications accepted before the queue was full: %d", pushed)
			return
		}
		notes++
	}
}

// TestEveryInvalidParamsCarriesItsDetailInOneShape: the contract's
// checks, the edge's own and a handler's -32602 all carry
// {"path","reason","message"}.
func TestEveryInvalidParamsCarriesItsDetailInOneShape(t *testing.T) {
	_, hs := start(t, newFixture(), testOptions())
	c := dial(t, hs)
	for _, tc := range []struct {
		name, method, params string
		want                 jsonrpc.ParamsDetail
	}{
		{"contract: unknown key", "workflow.health", `{"bogus":1}`, jsonrpc.ParamsDetail{Path: "params", Reason: `unknown key "bogus"`, Message: `params: unknown key "bogus"`}},
		{"contract: nested", "workflow.runs.start", `{"deployment_id":""}`, jsonrpc.ParamsDetail{Path: "params.deployment_id", Reason: "must not be empty", Message: "params.deployment_id: must not be empty"}},
		{"edge: array params", "test.fast", `[1]`, jsonrpc.ParamsDetail{Path: "params", Reason: "must be an object", Message: "params: must be an object"}},
		{"handler", "test.params", `{}`, jsonrpc.ParamsDetail{Path: "params", Reason: "step_id must not be empty", Message: "params: step_id must not be empty"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := c.call(`"p"`, tc.method, tc.params)
			is.Equal(code(r), jsonrpc.InvalidParams)
			is.Equal(r.Error.Message, "Invalid params")
			var got jsonrpc.ParamsDetail
			dec := json.NewDecoder(strings.NewReader(string(r.Error.Data)))
			dec.DisallowUnknownFields()
			is.NoErr(dec.Decode(&got)) // exactly the documented members
			is.Equal(got, tc.want)
		})
	}
}

// TestFramesTheSpecLeavesOpen: duplicate ids in a batch are each answered
// in frame order; invalid UTF-8 anywhere gets -32700 with a reply that is
// valid UTF-8; an over-long id is refused, not echoed.
func TestFramesTheSpecLeavesOpen(t *testing.T) {
	is := is.New(t)
	_, hs := start(t, newFixture(), testOptions())
	c := dial(t, hs)
	c.send(`[{"jsonrpc":"2.0","id":1,"method":"test.echo","params":{"a":1}},{"jsonrpc":"2.0","id":1,"method":"test.echo","params":{"b":2}}]`)
	var replies []response
	is.NoErr(json.Unmarshal(c.recvRaw(), &replies))
	is.Equal(len(replies), 2)
	is.Equal(string(replies[0].Result), `{"a":1}`)
	is.Equal(string(replies[1].Result), `{"b":2}`)

	c.send("{\"jsonrpc\":\"2.0\",\"id\":\"\xff\xfe\",\"method\":\"test.fast\"}")
	data := c.recvRaw()
	is.True(utf8.Valid(data))
	r := decode(t, data)
	is.Equal(code(r), jsonrpc.ParseError)
	is.Equal(string(r.ID), "null")

	r = decode(t, func() []byte {
		c.send(`{"jsonrpc":"2.0","id":"` + strings.Repeat("i", jsonrpc.MaxIDBytes) + `","method":"test.fast"}`)
		return c.recvRaw()
	}())
	is.Equal(code(r), jsonrpc.InvalidRequest)
	is.Equal(string(r.ID), "null")
}

// TestOptionsTakeTheConfigFilesEdgeBlock: every field of server.edge maps
// to its bound; absent fields keep the defaults.
func TestOptionsTakeTheConfigFilesEdgeBlock(t *testing.T) {
	is := is.New(t)
	d := edge.DefaultOptions()
	is.Equal(d.WithConfig(nil), d)
	is.Equal(d.WithConfig(&config.Edge{}), d)
	got := d.WithConfig(&config.Edge{
		MaxMessageBytes: 1, MaxBatch: 2, MaxInFlight: 3, MaxSubscriptions: 4, MaxConnectionsPerClient: 5,
		MaxConcurrentRuns: 6, MaxOutboundMessages: 7, MaxOutboundBytes: 8, RequestTimeoutMS: 9, WriteTimeoutMS: 10,
		PingIntervalMS: 11, PongTimeoutMS: 12, ReadHeaderTimeoutMS: 13, BodyTimeoutMS: 14,
	})
	ms := time.Millisecond
	is.Equal(got, edge.Options{
		MaxMessageBytes: 1, MaxBatch: 2, MaxInFlight: 3, MaxSubscriptions: 4, MaxConnsPerClient: 5,
		MaxOutboundMessages: 7, MaxOutboundBytes: 8, RequestTimeout: 9 * ms, WriteTimeout: 10 * ms,
		PingInterval: 11 * ms, PongWait: 12 * ms, ReadHeaderTimeout: 13 * ms, BodyTimeout: 14 * ms,
	})
	srv := edge.New(nil, contract.Default(), edge.Options{MaxBatch: 7})
	is.Equal(srv.Options().MaxBatch, 7)
	is.Equal(srv.Options().MaxInFlight, d.MaxInFlight) // zero bounds take their defaults
}

type releasedKey struct{}

// TestRequestContextReleasesAfterTheReply: with Options.RequestContext a
// handler of a method that pushes can hold its notifications until its
// reply is queued, so a client always sees the reply (say, a subscription
// id) first. A method that does not push runs without the hook.
func TestRequestContextReleasesAfterTheReply(t *testing.T) {
	is := is.New(t)
	f := newFixture()
	methods := open(f.methods())
	methods["test.later"] = rpc.Method{Scope: access.Read, Pushes: true, Handler: func(ctx context.Context, _ json.RawMessage) (any, error) {
		c, released := edge.ConnFrom(ctx), ctx.Value(releasedKey{}).(chan struct{})
		go func() {
			<-released
			_ = c.Notify(context.Background(), "test.note", nil)
		}()
		return "subscribed", nil
	}}
	methods["test.plain"] = rpc.Method{Scope: access.Read, Handler: func(ctx context.Context, _ json.RawMessage) (any, error) {
		return ctx.Value(releasedKey{}) == nil, nil
	}}
	opts := testOptions()
	opts.RequestContext = func(ctx context.Context, c *edge.Conn) (context.Context, func()) {
		is.True(edge.ConnFrom(ctx) == c)
		released := make(chan struct{})
		return context.WithValue(ctx, releasedKey{}, released), func() { close(released) }
	}
	_, hs := serveTable(t, methods, opts)
	c := dial(t, hs)
	is.Equal(string(c.call(`0`, "test.plain", "").Result), `true`) // no hook for a method that does not push
	r := c.call(`1`, "test.later", "")
	is.Equal(string(r.Result), `"subscribed"`)
	is.Equal(string(c.recvRaw()), `{"jsonrpc":"2.0","method":"test.note"}`) // after the reply
	c.send(`[{"jsonrpc":"2.0","id":2,"method":"test.later"},{"jsonrpc":"2.0","method":"test.later"}]`)
	is.Equal(c.recvRaw()[0], byte('[')) // the batch reply first
	is.Equal(string(c.recvRaw()), `{"jsonrpc":"2.0","method":"test.note"}`)
	is.Equal(string(c.recvRaw()), `{"jsonrpc":"2.0","method":"test.note"}`)
}
