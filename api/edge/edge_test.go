package edge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gorilla/websocket"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/api/contract"
	"github.com/mcpflow/mcpflow/api/edge"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// wait bounds every wait for something that should happen promptly.
const wait = 5 * time.Second

// logs captures the edge's slog output (tests do not run in parallel).
var logs lockedBuffer

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	os.Exit(m.Run())
}

// fixture is a small method table whose slow handler blocks until released
// and reports when it starts and when its context ends.
type fixture struct {
	started chan struct{}
	release chan struct{} // closed to release every slow call
	ctxErrs chan error
	// running counts the slow, stuck and echo calls running; maxRunning
	// is the most seen at once.
	running, maxRunning atomic.Int64
	calls               atomic.Int64 // every test.echo call
	// onEcho, when set, runs in every test.echo call.
	onEcho func(ctx context.Context)
}

func newFixture() *fixture {
	return &fixture{started: make(chan struct{}, 1024), release: make(chan struct{}), ctxErrs: make(chan error, 1024)}
}

// enter counts a call running until the returned func is called.
func (f *fixture) enter() func() {
	n := f.running.Add(1)
	for {
		m := f.maxRunning.Load()
		if n <= m || f.maxRunning.CompareAndSwap(m, n) {
			break
		}
	}
	return func() { f.running.Add(-1) }
}

// open makes a method table of handlers that any caller may call
// (access.Read: every principal of a guard without tokens has it).
func open(handlers map[string]rpc.Handler) map[string]rpc.Method {
	table := make(map[string]rpc.Method, len(handlers))
	for name, h := range handlers {
		table[name] = rpc.Method{Scope: access.Read, Handler: h}
	}
	return table
}

func (f *fixture) methods() map[string]rpc.Handler {
	return map[string]rpc.Handler{
		protocol.MethodHealth: func(context.Context, json.RawMessage) (any, error) {
			return protocol.HealthResult{Status: "ok", StoreRoot: "/store"}, nil
		},
		"test.fast": func(context.Context, json.RawMessage) (any, error) { return "fast", nil },
		"test.echo": func(ctx context.Context, params json.RawMessage) (any, error) {
			defer f.enter()()
			f.calls.Add(1)
			if f.onEcho != nil {
				f.onEcho(ctx)
			}
			return params, nil
		},
		"test.slow": func(ctx context.Context, _ json.RawMessage) (any, error) {
			defer f.enter()()
			f.started <- struct{}{}
			select {
			case <-f.release:
				return "slow", nil
			case <-ctx.Done():
				f.ctxErrs <- ctx.Err()
				return nil, ctx.Err()
			}
		},
		// test.stuck ignores its context: it returns only once released.
		"test.stuck": func(context.Context, json.RawMessage) (any, error) {
			defer f.enter()()
			f.started <- struct{}{}
			<-f.release
			return "stuck", nil
		},
		"test.timeout": func(ctx context.Context, _ json.RawMessage) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		},
		"test.domain": func(context.Context, json.RawMessage) (any, error) {
			return nil, jsonrpc.Failed("KeyError", "deployment 'd1' not found")
		},
		"test.plain": func(context.Context, json.RawMessage) (any, error) {
			return nil, errors.New("disk on fire at /secret/path")
		},
		"test.panic": func(context.Context, json.RawMessage) (any, error) { panic("boom at /secret/path") },
		// test.params fails as api/service reports invalid params.
		"test.params": func(context.Context, json.RawMessage) (any, error) {
			return nil, fmt.Errorf("edit: %w", &jsonrpc.Error{Code: jsonrpc.InvalidParams, Message: "invalid params: step_id must not be empty"})
		},
		// test.push sends its params back as a notification, then answers.
		"test.push": func(ctx context.Context, params json.RawMessage) (any, error) {
			c := edge.ConnFrom(ctx)
			if c == nil {
				return "no connection", nil
			}
			if err := c.Notify(ctx, "test.note", params); err != nil {
				return nil, err
			}
			return "pushed", nil
		},
		protocol.MethodRunsStart: func(ctx context.Context, _ json.RawMessage) (any, error) {
			f.started <- struct{}{}
			select {
			case <-f.release:
				return map[string]string{"run_id": "r1"}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
	}
}

// testOptions are DefaultOptions with test-sized limits.
func testOptions() edge.Options {
	o := edge.DefaultOptions()
	o.MaxMessageBytes = 64 << 10
	o.RequestTimeout = wait
	return o
}

// start serves f's methods with opts; cleanup closes the edge (cancelling
// every connection) before the listener.
func start(t testing.TB, f *fixture, opts edge.Options) (*edge.Server, *httptest.Server) {
	t.Helper()
	srv := edge.New(open(f.methods()), contract.Default(), opts)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	t.Cleanup(srv.Close)
	return srv, hs
}

func wsURL(hs *httptest.Server) string { return "ws" + strings.TrimPrefix(hs.URL, "http") + "/ws" }

// rawConn is a bare gorilla client: the test goroutine is its only reader
// and writer.
type rawConn struct {
	t  testing.TB
	is *is.I // shared by the methods, so a failure names the test's line
	ws *websocket.Conn
}

func dial(t testing.TB, hs *httptest.Server) *rawConn {
	t.Helper()
	return dialWith(t, websocket.DefaultDialer, wsURL(hs))
}

// dialWith opens a WebSocket to url through d, closed with the test.
func dialWith(t testing.TB, d *websocket.Dialer, url string) *rawConn {
	t.Helper()
	is := is.New(t)
	is.Helper()
	ws, resp, err := d.Dial(url, nil)
	is.NoErr(err) // dial the edge
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = ws.Close() })
	return &rawConn{t: t, is: is, ws: ws}
}

// startInMemory serves f's methods with opts over in-memory connections
// (net.Pipe) and dials one. Inside a synctest bubble the edge and its
// peer then wait on the bubble's clock alone: a test of a timing the edge
// keeps (its pings, its pong wait) sees that timing exactly, however
// loaded the machine. Cleanup closes the edge, then the HTTP server, and
// waits for it.
func startInMemory(t *testing.T, f *fixture, opts edge.Options) *rawConn {
	t.Helper()
	srv := edge.New(open(f.methods()), contract.Default(), opts)
	l := newPipeListener()
	hs := &http.Server{Handler: srv.Handler()}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = hs.Serve(l)
	}()
	t.Cleanup(func() { <-served })
	t.Cleanup(func() { _ = hs.Close() })
	t.Cleanup(srv.Close)
	// A loopback host, as the edge's default gate asks; the dial itself
	// never leaves the process.
	return dialWith(t, &websocket.Dialer{NetDialContext: l.dial}, "ws://127.0.0.1/ws")
}

// pipeListener is a net.Listener whose connections are in-memory pipes.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// dial hands the server's end of a new pipe to Accept and returns the
// client's.
func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		err := net.ErrClosed
		_, _ = client.Close(), server.Close()
		return nil, err
	case <-ctx.Done():
		_, _ = client.Close(), server.Close()
		return nil, ctx.Err()
	}
}

// pipeAddr is the address of both ends of an in-memory connection.
type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

func (c *rawConn) send(frame string) {
	c.t.Helper()
	c.is.Helper()
	_ = c.ws.SetWriteDeadline(time.Now().Add(wait))
	err := c.ws.WriteMessage(websocket.TextMessage, []byte(frame))
	if err != nil {
		c.t.Logf("write %s: %v", frame, err)
	}
	c.is.NoErr(err) // write the frame
}

func (c *rawConn) recvRaw() []byte {
	c.t.Helper()
	c.is.Helper()
	_ = c.ws.SetReadDeadline(time.Now().Add(wait))
	_, data, err := c.ws.ReadMessage()
	if err != nil {
		c.t.Logf("read: %v", err)
	}
	c.is.NoErr(err) // read a message
	return data
}

func (c *rawConn) recv() response {
	c.t.Helper()
	return decode(c.t, c.recvRaw())
}

// call sends one request and reads the next message, which must answer it.
func (c *rawConn) call(id, method, params string) response {
	c.t.Helper()
	c.is.Helper()
	frame := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q`, id, method)
	if params != "" {
		frame += `,"params":` + params
	}
	c.send(frame + "}")
	r := c.recv()
	c.is.Equal(string(r.ID), id) // the reply answers the request
	return r
}

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcError       `json:"error"`
}

func decode(t testing.TB, data []byte) response {
	t.Helper()
	is := is.New(t)
	is.Helper()
	if len(data) == 0 || data[0] != '{' {
		t.Logf("reply is not a single object: %s", data)
		is.Fail() // the reply is a single object
	}
	var r response
	err := json.Unmarshal(data, &r)
	if err != nil {
		t.Logf("decode %s: %v", data, err)
	}
	is.NoErr(err) // decode the reply
	if r.JSONRPC != "2.0" || (r.Error == nil) == (r.Result == nil) {
		t.Logf("malformed response: %s", data)
		is.Fail() // the reply is a JSON-RPC 2.0 response with either a result or an error
	}
	return r
}

func code(r response) int {
	if r.Error == nil {
		return 0
	}
	return r.Error.Code
}

// waitStarted waits for n slow calls to start.
func (f *fixture) waitStarted(t testing.TB, n int) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	for i := range n {
		select {
		case <-f.started:
		case <-time.After(wait):
			t.Logf("%d of %d slow handlers started within %s", i, n, wait)
			is.Fail() // the slow handlers start
		}
	}
}

func TestWebSocketHealth(t *testing.T) {
	is := is.New(t)
	_, hs := start(t, newFixture(), testOptions())
	c := dial(t, hs)
	r := c.call(`1`, "workflow.health", "")
	is.Equal(r.Error, nil)
	var h protocol.HealthResult
	is.NoErr(json.Unmarshal(r.Result, &h))
	is.Equal(h, protocol.HealthResult{Status: "ok", StoreRoot: "/store"})
	r = c.call(`2`, "workflow.health", `{}`)
	is.Equal(r.Error, nil)
	r = c.call(`3`, "workflow.health", `null`) // null params count as absent
	is.Equal(r.Error, nil)
}

func TestWebSocketParseErrorKeepsConnection(t *testing.T) {
	is := is.New(t)
	_, hs := start(t, newFixture(), testOptions())
	c := dial(t, hs)
	c.send(`{"jsonrpc":"2.0","id":1,"method":`)
	r := c.recv()
	is.Equal(code(r), jsonrpc.ParseError)
	is.Equal(string(r.ID), "null")
	r = c.call(`2`, "workflow.health", "")
	is.Equal(r.Error, nil) // the connection survives a parse error
}

func TestWebSocketUnknownMethodEchoesID(t *testing.T) {
	_, hs := start(t, newFixture(), testOptions())
	c := dial(t, hs)
	for _, id := range []string{`"abc"`, `7`, `0`, `-3`, `"<&>"`, `1.50`} {
		t.Run(id, func(t *testing.T) {
			is := is.New(t)
			r := c.call(id, "no.such.method", "") // call checks the id bytes
			is.Equal(code(r), jsonrpc.MethodNotFound)
		})
	}
	is.New(t).Equal(code(c.call(`8`, "rpc.other", "")), jsonrpc.MethodNotFound) // reserved
}

func TestWebSocketInvalidParams(t *testing.T) {
	_, hs := start(t, newFixture(), testOptions())
	c := dial(t, hs)
	for _, tc := range []struct {
		name, method, params string
		want                 int
	}{
		{"unknown key", "workflow.health", `{"bogus":1}`, jsonrpc.InvalidParams},
		{"array params in contract", "workflow.health", `[]`, jsonrpc.InvalidParams},
		{"array params off contract", "test.fast", `[1,2]`, jsonrpc.InvalidParams},
		{"number params", "workflow.health", `5`, jsonrpc.InvalidRequest},
		{"string params", "test.fast", `"x"`, jsonrpc.InvalidRequest},
		{"true params", "test.fast", `true`, jsonrpc.InvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := c.call(`"p"`, tc.method, tc.params)
			is.Equal(code(r), tc.want)
		})
	}
	is.New(t).Equal(c.call(`9`, "workflow.health", "").Error, nil) // still usable
}

func TestWebSocketBatch(t *testing.T) {
	is := is.New(t)
	_, hs := start(t, newFixture(), testOptions())
	c := dial(t, hs)
	c.send(`[
		{"jsonrpc":"2.0","id":1,"method":"workflow.health"},
		{"jsonrpc":"2.0","id":2},
		{"jsonrpc":"2.0","id":"c","method":"test.fast","params":{}}
	]`)
	data := c.recvRaw()
	var replies []json.RawMessage
	is.NoErr(json.Unmarshal(data, &replies)) // a batch is answered by one array
	is.Equal(len(replies), 3)
	byID := map[string]response{}
	for _, raw := range replies {
		r := decode(t, raw)
		byID[string(r.ID)] = r
	}
	is.Equal(len(byID), 3)
	is.Equal(byID[`1`].Error, nil)
	is.Equal(code(byID[`2`]), jsonrpc.InvalidRequest)
	is.Equal(string(byID[`"c"`].Result), `"fast"`)
}

func TestWebSocketBatchNotifications(t *testing.T) {
	is := is.New(t)
	_, hs := start(t, newFixture(), testOptions())
	c := dial(t, hs)
	// A notification inside a batch gets no entry in the reply.
	c.send(`[{"jsonrpc":"2.0","method":"test.fast"},{"jsonrpc":"2.0","id":1,"method":"test.fast"}]`)
	var replies []response
	is.NoErr(json.Unmarshal(c.recvRaw(), &replies))
	is.Equal(len(replies), 1)
	is.Equal(string(replies[0].ID), `1`)
	// A batch of notifications only gets no reply at all: the next message
	// read answers the request sent after it.
	c.send(`[{"jsonrpc":"2.0","method":"test.fast"},{"jsonrpc":"2.0","method":"workflow.health"}]`)
	r := c.call(`2`, "workflow.health", "")
	is.Equal(r.Error, nil)
}

func TestWebSocketEmptyBatch(t *testing.T) {
	is := is.New(t)
	_, hs := start(t, newFixture(), testOptions())
	c := dial(t, hs)
	c.send(`[]`)
	r := c.recv() // decode insists on a single object, not an array
	is.Equal(code(r), jsonrpc.InvalidRequest)
	is.Equal(string(r.ID), "null")
}

func TestWebSocketBatchTooLarge(t *testing.T) {
	is := is.New(t)
	opts := testOptions()
	opts.MaxBatch = 2
	_, hs := start(t, newFixture(), opts)
	c := dial(t, hs)
	c.send(`[{"jsonrpc":"2.0","id":1,"method":"test.fast"},{"jsonrpc":"2.0","id":2,"method":"test.fast"},{"jsonrpc":"2.0","id":3,"method":"test.fast"}]`)
	r := c.recv()
	is.Equal(code(r), jsonrpc.InvalidRequest)
	is.Equal(string(r.ID), "null")
}

func TestWebSocketNotificationNotAnswered(t *testing.T) {
	is := is.New(t)
	f := newFixture()
	_, hs := start(t, f, testOptions())
	c := dial(t, hs)
	c.send(`{"jsonrpc":"2.0","method":"test.fast"}`)
	c.send(`{"jsonrpc":"2.0","method":"no.such.method"}`) // not even an error
	c.send(`{"jsonrpc":"2.0","method":"test.slow"}`)
	f.waitStarted(t, 1)
	r := c.call(`1`, "workflow.health", "") // the next message answers the request
	is.Equal(r.Error, nil)
	close(f.release) // the slow notification finishes...
	r = c.call(`2`, "workflow.health", "")
	is.Equal(r.Error, nil) // ...and still is not answered
}

func TestWebSocketErrors(t *testing.T) {
	is := is.New(t)
	opts := testOptions()
	opts.RequestTimeout = 50 * time.Millisecond
	_, hs := start(t, newFixture(), opts)
	c := dial(t, hs)

	r := c.call(`1`, "test.domain", "")
	is.Equal(code(r), jsonrpc.OperationFailed)
	is.Equal(r.Error.Message, "Workflow operation failed")
	var data jsonrpc.ErrorData
	is.NoErr(json.Unmarshal(r.Error.Data, &data))
	is.Equal(data, jsonrpc.ErrorData{Code: "KeyError", Message: "deployment 'd1' not found"})

	r = c.call(`2`, "test.plain", "")
	is.Equal(code(r), jsonrpc.InternalError)
	is.Equal(r.Error.Message, "Internal error")
	is.True(!strings.Contains(string(r.Error.Data), "secret"))               // internals are not leaked...
	is.True(strings.Contains(logs.String(), "disk on fire at /secret/path")) // ...but logged

	r = c.call(`3`, "test.timeout", "")
	is.Equal(code(r), jsonrpc.RequestTimeout)
}

func TestWebSocketHandlerPanic(t *testing.T) {
	is := is.New(t)
	_, hs := start(t, newFixture(), testOptions())
	c := dial(t, hs)
	r := c.call(`1`, "test.panic", "")
	is.Equal(code(r), jsonrpc.InternalError)
	is.True(!strings.Contains(string(r.Error.Data), "secret"))                          // the panic value is not leaked...
	is.True(strings.Contains(logs.String(), `msg="method panicked" method=test.panic`)) // ...but logged
	is.Equal(c.call(`2`, "workflow.health", "").Error, nil)                             // the server and the connection survive
}

func TestWebSocketAnswersAsTheyFinish(t *testing.T) {
	is := is.New(t)
	f := newFixture()
	_, hs := start(t, f, testOptions())
	c := dial(t, hs)
	c.send(`{"jsonrpc":"2.0","id":"slow","method":"test.slow"}`)
	f.waitStarted(t, 1)
	c.send(`{"jsonrpc":"2.0","id":"fast","method":"test.fast"}`)
	r := c.recv()
	is.Equal(string(r.ID), `"fast"`) // the fast reply overtakes the slow one
	close(f.release)
	r = c.recv()
	is.Equal(string(r.ID), `"slow"`)
	is.Equal(string(r.Result), `"slow"`)
}

// TestWebSocketMaxInFlight: requests beyond the free slots wait for one
// (the connection is not read meanwhile) instead of being refused, and no
// more than MaxInFlight run at once, batch entries included.
func TestWebSocketMaxInFlight(t *testing.T) {
	is := is.New(t)
	f := newFixture()
	opts := testOptions()
	opts.MaxInFlight = 2
	_, hs := start(t, f, opts)
	c := dial(t, hs)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"test.slow"}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"test.slow"}`)
	f.waitStarted(t, 2)
	c.send(`{"jsonrpc":"2.0","id":3,"method":"test.slow"}`)
	c.send(`[{"jsonrpc":"2.0","id":4,"method":"test.slow"},{"jsonrpc":"2.0","id":5,"method":"test.fast"}]`)
	close(f.release)
	got := map[string]bool{}
	for range 4 { // 1, 2, 3 and the batch
		data := c.recvRaw()
		if data[0] == '[' {
			var replies []response
			is.NoErr(json.Unmarshal(data, &replies))
			is.Equal(len(replies), 2)
			is.Equal(string(replies[0].ID), "4") // frame order
			is.Equal(string(replies[0].Result), `"slow"`)
			is.Equal(string(replies[1].Result), `"fast"`)
			got["batch"] = true
			continue
		}
		r := decode(t, data)
		is.Equal(string(r.Result), `"slow"`) // waited, not refused
		got[string(r.ID)] = true
	}
	is.Equal(got, map[string]bool{"1": true, "2": true, "3": true, "batch": true})
	is.True(f.maxRunning.Load() <= 2) // never more than MaxInFlight at once
}

// TestWebSocketMaxInFlightWindow pipelines requests keeping exactly
// MaxInFlight outstanding: a new request is sent as soon as a reply
// arrives, so none may be refused.
func TestWebSocketMaxInFlightWindow(t *testing.T) {
	is := is.New(t)
	opts := testOptions()
	opts.MaxInFlight = 2
	_, hs := start(t, newFixture(), opts)
	c := dial(t, hs)
	const total = 300
	next := 0
	sendNext := func() {
		next++
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"test.fast"}`, next))
	}
	sendNext()
	sendNext()
	for range total {
		r := c.recv()
		is.Equal(r.Error, nil) // no -32000 with at most MaxInFlight outstanding
		if next < total {
			sendNext()
		}
	}
}

func TestWebSocketMessageTooBig(t *testing.T) {
	is := is.New(t)
	opts := testOptions()
	opts.MaxMessageBytes = 1024
	_, hs := start(t, newFixture(), opts)
	c := dial(t, hs)
	c.call(`1`, "test.echo", `{"pad":"`+strings.Repeat("x", 900)+`"}`) // under the limit
	c.send(`{"jsonrpc":"2.0","id":2,"method":"test.echo","params":{"pad":"` + strings.Repeat("x", 2048) + `"}}`)
	_ = c.ws.SetReadDeadline(time.Now().Add(wait))
	_, _, err := c.ws.ReadMessage()
	is.True(websocket.IsCloseError(err, websocket.CloseMessageTooBig)) // close 1009
}

func TestWebSocketOrigin(t *testing.T) {
	opts := testOptions()
	opts.Gate = access.NewGate([]string{"https://app.example.com/"}, nil)
	_, hs := start(t, newFixture(), opts)
	host := strings.TrimPrefix(hs.URL, "http://")
	for _, tc := range []struct {
		origin string
		ok     bool
	}{
		{"", true},
		{"http://" + host, true},
		{"HTTP://" + strings.ToUpper(host), true},
		{"https://app.example.com", true},
		{"https://APP.example.com", true},
		{"https://evil.example.com", false},
		{"http://" + host + ".evil.example", false},
		{"https://app.example.com.evil.example", false},
		{"null", false},
	} {
		t.Run(tc.origin, func(t *testing.T) {
			is := is.New(t)
			h := http.Header{}
			if tc.origin != "" {
				h.Set("Origin", tc.origin)
			}
			ws, resp, err := websocket.DefaultDialer.Dial(wsURL(hs), h)
			if ws != nil {
				defer ws.Close()
			}
			if resp != nil {
				_ = resp.Body.Close()
			}
			if tc.ok {
				is.NoErr(err)
				return
			}
			is.Equal(err, websocket.ErrBadHandshake)
			is.Equal(resp.StatusCode, http.StatusForbidden)
		})
	}
}

// pinged reads c in the background, counting pings (answered with pongs
// unless silent) and forwarding messages.
func pinged(c *rawConn, silent bool) (pings <-chan struct{}, msgs <-chan []byte, readErr <-chan error) {
	p := make(chan struct{}, 1024)
	m := make(chan []byte, 16)
	e := make(chan error, 1)
	c.ws.SetPingHandler(func(data string) error {
		select {
		case p <- struct{}{}:
		default:
		}
		if silent {
			return nil
		}
		return c.ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(wait))
	})
	go func() {
		for {
			_, data, err := c.ws.ReadMessage()
			if err != nil {
				e <- err
				return
			}
			m <- data
		}
	}()
	return p, m, e
}

// TestWebSocketPingKeepsAnsweringPeerAlive runs in a synctest bubble over
// in-memory connections: the pong wait is the behaviour under test, and
// on the machine's clock a peer starved of CPU for PingInterval plus
// PongWait (110 ms under a loaded -race run) missed it without any fault
// of the edge's.
func TestWebSocketPingKeepsAnsweringPeerAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		opts := testOptions()
		opts.PingInterval = 10 * time.Millisecond
		opts.PongWait = 100 * time.Millisecond
		c := startInMemory(t, newFixture(), opts)
		pings, msgs, readErr := pinged(c, false)
		// Twenty pings span twice PongWait: only the pongs kept the connection.
		for i := range 20 {
			select {
			case <-pings:
			case err := <-readErr:
				t.Logf("connection dropped after %d pings: %v", i, err)
				is.Fail() // a peer that answers pings stays connected
			case <-time.After(wait):
				t.Logf("no ping %d within %s", i, wait)
				is.Fail() // the server keeps pinging
			}
		}
		c.send(`{"jsonrpc":"2.0","id":1,"method":"workflow.health"}`)
		select {
		case data := <-msgs:
			r := decode(t, data)
			is.Equal(r.Error, nil)
		case err := <-readErr:
			is.NoErr(err) // read the reply
		case <-time.After(wait):
			is.Fail() // a reply arrives in time
		}
	})
}

func TestWebSocketSilentPeerDropped(t *testing.T) {
	is := is.New(t)
	opts := testOptions()
	opts.PingInterval = 10 * time.Millisecond
	opts.PongWait = 50 * time.Millisecond
	_, hs := start(t, newFixture(), opts)
	c := dial(t, hs)
	_, _, readErr := pinged(c, true) // reads, but never answers a ping
	select {
	case err := <-readErr:
		var ne interface{ Timeout() bool }
		if errors.As(err, &ne) && ne.Timeout() {
			t.Logf("client read error: %v", err)
		}
		is.True(!errors.As(err, &ne) || !ne.Timeout()) // dropped by the server, not timed out by the client
	case <-time.After(wait):
		is.Fail() // the silent peer is dropped in time
	}
}

func TestServerCloseEndsConnections(t *testing.T) {
	is := is.New(t)
	f := newFixture()
	srv, hs := start(t, f, testOptions())
	c := dial(t, hs)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"test.slow"}`)
	f.waitStarted(t, 1)
	srv.Close()
	select {
	case err := <-f.ctxErrs:
		is.True(errors.Is(err, context.Canceled)) // the in-flight handler saw its context cancelled
	case <-time.After(wait):
		is.Fail() // the in-flight handler's context is cancelled in time
	}
	_ = c.ws.SetReadDeadline(time.Now().Add(wait))
	_, _, err := c.ws.ReadMessage()
	is.True(err != nil)
	var ne interface{ Timeout() bool }
	is.True(!errors.As(err, &ne) || !ne.Timeout()) // closed by the server, not our deadline
}

func post(t testing.TB, hs *httptest.Server, body string) (int, string, []byte) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hs.URL+"/rpc", strings.NewReader(body))
	is.NoErr(err) // new request
	req.Header.Set("Content-Type", "application/json")
	resp, err := hs.Client().Do(req)
	is.NoErr(err) // POST /rpc
	defer resp.Body.Close()
	reply, err := io.ReadAll(resp.Body)
	is.NoErr(err) // read the reply body
	return resp.StatusCode, resp.Header.Get("Content-Type"), reply
}

func TestHTTP(t *testing.T) {
	opts := testOptions()
	opts.MaxMessageBytes = 1024
	_, hs := start(t, newFixture(), opts)

	t.Run("single", func(t *testing.T) {
		is := is.New(t)
		status, ctype, body := post(t, hs, `{"jsonrpc":"2.0","id":"h","method":"workflow.health"}`)
		is.Equal(status, http.StatusOK)
		is.Equal(ctype, "application/json")
		r := decode(t, body)
		is.Equal(string(r.ID), `"h"`)
		is.Equal(string(r.Result), `{"status":"ok","store_root":"/store"}`)
	})
	t.Run("batch", func(t *testing.T) {
		is := is.New(t)
		status, _, body := post(t, hs, `[{"jsonrpc":"2.0","id":1,"method":"test.fast"},{"jsonrpc":"2.0","method":"test.fast"},{"jsonrpc":"2.0","id":2,"method":"nope"},{"jsonrpc":"2.0","id":3,"method":"test.domain"}]`)
		is.Equal(status, http.StatusOK)
		var replies []response
		is.NoErr(json.Unmarshal(body, &replies))
		is.Equal(len(replies), 3)
		byID := map[string]response{}
		for _, r := range replies {
			byID[string(r.ID)] = r
		}
		is.Equal(string(byID["1"].Result), `"fast"`)
		is.Equal(code(byID["2"]), jsonrpc.MethodNotFound)
		is.Equal(code(byID["3"]), jsonrpc.OperationFailed)
	})
	t.Run("notification only", func(t *testing.T) {
		is := is.New(t)
		status, _, body := post(t, hs, `{"jsonrpc":"2.0","method":"test.fast"}`)
		is.Equal(status, http.StatusNoContent)
		is.Equal(len(body), 0)
		status, _, body = post(t, hs, `[{"jsonrpc":"2.0","method":"test.fast"},{"jsonrpc":"2.0","method":"workflow.health"}]`)
		is.Equal(status, http.StatusNoContent)
		is.Equal(len(body), 0)
	})
	t.Run("parse error", func(t *testing.T) {
		is := is.New(t)
		status, _, body := post(t, hs, `{"jsonrpc":`)
		is.Equal(status, http.StatusOK)
		r := decode(t, body)
		is.Equal(code(r), jsonrpc.ParseError)
		is.Equal(string(r.ID), "null")
	})
	t.Run("empty batch", func(t *testing.T) {
		is := is.New(t)
		_, _, body := post(t, hs, `[]`)
		is.Equal(code(decode(t, body)), jsonrpc.InvalidRequest)
	})
	t.Run("body too large", func(t *testing.T) {
		is := is.New(t)
		status, _, _ := post(t, hs, `{"jsonrpc":"2.0","id":1,"method":"test.echo","params":{"pad":"`+strings.Repeat("x", 2048)+`"}}`)
		is.Equal(status, http.StatusRequestEntityTooLarge)
	})
	t.Run("panic", func(t *testing.T) {
		is := is.New(t)
		_, _, body := post(t, hs, `{"jsonrpc":"2.0","id":1,"method":"test.panic"}`)
		is.Equal(code(decode(t, body)), jsonrpc.InternalError)
	})
	t.Run("healthz", func(t *testing.T) {
		is := is.New(t)
		resp, err := hs.Client().Get(hs.URL + "/healthz")
		is.NoErr(err)
		defer resp.Body.Close()
		is.Equal(resp.StatusCode, http.StatusOK)
		is.Equal(resp.Header.Get("Content-Type"), "application/json")
		var body map[string]string
		is.NoErr(json.NewDecoder(resp.Body).Decode(&body))
		is.Equal(body, map[string]string{"status": "ok"})
	})
	t.Run("wrong verb", func(t *testing.T) {
		is := is.New(t)
		resp, err := hs.Client().Get(hs.URL + "/rpc")
		is.NoErr(err)
		_ = resp.Body.Close()
		is.Equal(resp.StatusCode, http.StatusMethodNotAllowed)
	})
}

// TestHTTPOrigin: /rpc applies the WebSocket origin check, since a
// cross-site page can POST text/plain without a CORS preflight.
func TestHTTPOrigin(t *testing.T) {
	opts := testOptions()
	opts.Gate = access.NewGate([]string{"https://app.example.com"}, nil)
	_, hs := start(t, newFixture(), opts)
	for _, tc := range []struct {
		origin string
		want   int
	}{
		{"", http.StatusOK},
		{hs.URL, http.StatusOK},
		{"https://app.example.com", http.StatusOK},
		{"https://evil.example.com", http.StatusForbidden},
	} {
		t.Run(tc.origin, func(t *testing.T) {
			is := is.New(t)
			req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, hs.URL+"/rpc",
				strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"test.fast"}`))
			is.NoErr(err)
			req.Header.Set("Content-Type", "text/plain")
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			resp, err := hs.Client().Do(req)
			is.NoErr(err)
			_ = resp.Body.Close()
			is.Equal(resp.StatusCode, tc.want)
		})
	}
}

func BenchmarkWebSocketRoundTrip(b *testing.B) {
	_, hs := start(b, newFixture(), testOptions())
	c := dial(b, hs)
	frame := []byte(`{"jsonrpc":"2.0","id":1,"method":"workflow.health"}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.ws.WriteMessage(websocket.TextMessage, frame); err != nil {
			b.Fatal(err)
		}
		if _, _, err := c.ws.ReadMessage(); err != nil {
			b.Fatal(err)
		}
	}
}
