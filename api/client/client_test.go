package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
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

func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil))) // the edge logs cancelled handlers
	os.Exit(m.Run())
}

type fixture struct {
	started chan struct{}
	release chan struct{}
}

func (f *fixture) methods() map[string]rpc.Handler {
	return map[string]rpc.Handler{
		protocol.MethodHealth: func(context.Context, json.RawMessage) (any, error) {
			return protocol.HealthResult{Status: "ok", StoreRoot: "/store"}, nil
		},
		"test.echo": func(_ context.Context, params json.RawMessage) (any, error) { return params, nil },
		"test.slow": func(ctx context.Context, _ json.RawMessage) (any, error) {
			f.started <- struct{}{}
			select {
			case <-f.release:
				return "slow", nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
		"test.domain": func(context.Context, json.RawMessage) (any, error) {
			return nil, jsonrpc.Failed("KeyError", "deployment 'd1' not found")
		},
	}
}

// start serves a fixture and dials it; cleanup closes the client, the
// edge and the listener, in that order.
func start(t *testing.T) (*Client, *edge.Server, *fixture) {
	t.Helper()
	return startWith(t, nil, edge.DefaultOptions())
}

// startWith is start with more methods (added to, or replacing, the
// fixture's) and the edge's options.
func startWith(t *testing.T, more map[string]rpc.Handler, opts edge.Options) (*Client, *edge.Server, *fixture) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	f := &fixture{started: make(chan struct{}, 64), release: make(chan struct{})}
	table := map[string]rpc.Method{}
	for _, handlers := range []map[string]rpc.Handler{f.methods(), more} {
		for name, h := range handlers {
			table[name] = rpc.Method{Scope: access.Read, Pushes: true, Handler: h} // any may push: the subscription tests' do
		}
	}
	srv := edge.New(table, contract.Default(), opts)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	c, err := Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http")+"/ws")
	is.NoErr(err) // dial the edge
	t.Cleanup(func() { _ = c.Close() })
	return c, srv, f
}

func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

func (f *fixture) waitStarted(t *testing.T) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	select {
	case <-f.started:
	case <-time.After(wait):
		t.Logf("slow handler did not start within %s", wait)
		is.Fail() // the slow handler starts
	}
}

// waitReaderStopped waits until the client has seen the connection end.
func waitReaderStopped(t *testing.T, c *Client) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	select {
	case <-c.done:
	case <-time.After(wait):
		t.Logf("client did not notice the closed connection within %s", wait)
		is.Fail() // the client's reader stops
	}
}

func TestHealth(t *testing.T) {
	is := is.New(t)
	c, _, _ := start(t)
	h, err := c.Health(bounded(t))
	is.NoErr(err)
	is.Equal(h, protocol.HealthResult{Status: "ok", StoreRoot: "/store"})
	is.NoErr(c.Call(bounded(t), protocol.MethodHealth, nil, nil)) // a nil result is allowed
}

func TestConcurrentCalls(t *testing.T) {
	is := is.New(t)
	c, _, _ := start(t)
	const n = 50
	type echo struct {
		N int    `json:"n"`
		S string `json:"s"`
	}
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			want := echo{N: i, S: fmt.Sprint("call-", i)}
			for range 5 {
				var got echo
				if err := c.Call(bounded(t), "test.echo", want, &got); err != nil {
					errs <- err
					return
				}
				if got != want {
					errs <- fmt.Errorf("call %d got %+v", i, got)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		is.NoErr(err) // every caller gets its own result
	}
	c.mu.Lock()
	is.Equal(len(c.pending), 0) // nothing left behind
	c.mu.Unlock()
}

func TestJSONRPCError(t *testing.T) {
	c, _, _ := start(t)
	t.Run("domain", func(t *testing.T) {
		is := is.New(t)
		err := c.Call(bounded(t), "test.domain", nil, nil)
		var rpcErr *jsonrpc.Error
		is.True(errors.As(err, &rpcErr))
		is.Equal(rpcErr.Code, jsonrpc.OperationFailed)
		is.Equal(rpcErr.Data, map[string]any{"code": "KeyError", "message": "deployment 'd1' not found"})
		is.Equal(err.Error(), "jsonrpc 5000 Workflow operation failed: deployment 'd1' not found")
	})
	t.Run("unknown method", func(t *testing.T) {
		is := is.New(t)
		var rpcErr *jsonrpc.Error
		is.True(errors.As(c.Call(bounded(t), "no.such.method", nil, nil), &rpcErr))
		is.Equal(rpcErr.Code, jsonrpc.MethodNotFound)
	})
	t.Run("invalid params", func(t *testing.T) {
		is := is.New(t)
		var rpcErr *jsonrpc.Error
		is.True(errors.As(c.Call(bounded(t), protocol.MethodHealth, map[string]int{"bogus": 1}, nil), &rpcErr))
		is.Equal(rpcErr.Code, jsonrpc.InvalidParams)
	})
	t.Run("undecodable result", func(t *testing.T) {
		is := is.New(t)
		var n int
		err := c.Call(bounded(t), "test.echo", map[string]string{"a": "b"}, &n)
		is.True(err != nil)
		var rpcErr *jsonrpc.Error
		is.True(!errors.As(err, &rpcErr)) // a local decoding failure, not a server error
	})
	t.Run("unencodable params", func(t *testing.T) {
		is := is.New(t)
		err := c.Call(bounded(t), "test.echo", map[string]any{"f": func() {}}, nil)
		is.True(err != nil)
	})
	is.New(t).NoErr(c.Call(bounded(t), protocol.MethodHealth, nil, nil)) // the connection is still fine
}

func TestCallAfterServerClose(t *testing.T) {
	is := is.New(t)
	c, srv, _ := start(t)
	is.NoErr(c.Call(bounded(t), protocol.MethodHealth, nil, nil))
	srv.Close()
	waitReaderStopped(t, c)
	err := c.Call(bounded(t), protocol.MethodHealth, nil, nil)
	is.True(errors.Is(err, ErrClosed))
}

func TestPendingCallFailsOnServerClose(t *testing.T) {
	is := is.New(t)
	c, srv, f := start(t)
	errc := make(chan error, 1)
	go func() { errc <- c.Call(bounded(t), "test.slow", nil, nil) }()
	f.waitStarted(t)
	srv.Close()
	select {
	case err := <-errc:
		is.True(errors.Is(err, ErrClosed))
	case <-time.After(wait):
		is.Fail() // the pending call fails when the server closes
	}
}

func TestCallAfterClientClose(t *testing.T) {
	is := is.New(t)
	c, _, f := start(t)
	errc := make(chan error, 1)
	go func() { errc <- c.Call(bounded(t), "test.slow", nil, nil) }()
	f.waitStarted(t)
	is.NoErr(c.Close())
	select {
	case err := <-errc:
		is.True(errors.Is(err, ErrClosed)) // the pending call fails
	case <-time.After(wait):
		is.Fail() // the pending call fails when the client closes
	}
	is.True(errors.Is(c.Call(bounded(t), protocol.MethodHealth, nil, nil), ErrClosed)) // so do later ones
	_ = c.Close()                                                                      // a second Close does not hang
}

func TestContextDeadline(t *testing.T) {
	is := is.New(t)
	c, _, f := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := c.Call(ctx, "test.slow", nil, nil)
	is.True(errors.Is(err, context.DeadlineExceeded))
	f.waitStarted(t)
	close(f.release) // the late reply arrives for nobody...
	var h protocol.HealthResult
	is.NoErr(c.Call(bounded(t), protocol.MethodHealth, nil, &h)) // ...and does not confuse the next call
	is.Equal(h.Status, "ok")
	var got string
	is.NoErr(c.Call(bounded(t), "test.slow", nil, &got))
	is.Equal(got, "slow")
}

func TestContextCancel(t *testing.T) {
	is := is.New(t)
	c, _, f := start(t)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- c.Call(ctx, "test.slow", nil, nil) }()
	f.waitStarted(t)
	cancel()
	select {
	case err := <-errc:
		is.True(errors.Is(err, context.Canceled))
	case <-time.After(wait):
		is.Fail() // the cancelled call returns
	}
	c.mu.Lock()
	is.Equal(len(c.pending), 0) // the abandoned call is forgotten
	c.mu.Unlock()
}

func TestDialFailure(t *testing.T) {
	is := is.New(t)
	hs := httptest.NewServer(nil)
	url := "ws" + strings.TrimPrefix(hs.URL, "http") + "/ws"
	hs.Close()
	_, err := Dial(bounded(t), url)
	is.True(err != nil)
}

// TestCallsRacingServerClose: whichever way a call meets the closed
// connection (its write fails, or its reply never comes), it fails with
// ErrClosed.
func TestCallsRacingServerClose(t *testing.T) {
	is := is.New(t)
	c, srv, _ := start(t)
	const callers = 8
	errs := make(chan error, callers)
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for {
				if err := c.Call(bounded(t), protocol.MethodHealth, nil, nil); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	srv.Close()
	wg.Wait()
	close(errs)
	for err := range errs {
		is.True(errors.Is(err, ErrClosed)) // not a bare "broken pipe"
	}
}

// TestCloseWhileWriteBlocked: a call stuck writing to a server that does
// not read must not keep Close waiting, and fails with ErrClosed.
func TestCloseWhileWriteBlocked(t *testing.T) {
	is := is.New(t)
	hold := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		<-hold // never reads
	}))
	t.Cleanup(hs.Close)
	t.Cleanup(func() { close(hold) })
	c, err := Dial(bounded(t), "ws"+strings.TrimPrefix(hs.URL, "http"))
	is.NoErr(err)

	// Far more than loopback socket buffers hold, so the write blocks.
	big := map[string]string{"pad": strings.Repeat("x", 16<<20)}
	callErr := make(chan error, 1)
	go func() { callErr <- c.Call(context.Background(), "x", big, nil) }()
	// Wait (bounded) until the call holds the write lock for a while. The
	// bound covers encoding 16 MiB twice first, which takes seconds under
	// the race detector.
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	giveUp := time.After(6 * wait)
	for held := 0; held < 50; {
		select {
		case <-tick.C:
		case <-giveUp:
			is.Fail() // the call starts writing and holds the write lock
		}
		if c.writeMu.TryLock() {
			c.writeMu.Unlock()
			held = 0
		} else {
			held++
		}
	}

	closed := make(chan struct{})
	go func() { _ = c.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(wait):
		is.Fail() // Close does not hang behind a blocked write
	}
	select {
	case err := <-callErr:
		is.True(errors.Is(err, ErrClosed))
	case <-time.After(wait):
		is.Fail() // the blocked call fails
	}
}
