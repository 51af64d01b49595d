// Package client is the Go client of mcpflow's JSON-RPC API over
// WebSocket. Its typed methods mirror the reference system's client
// (CreateDraftWorkspaceFromCapability, SaveDeployment, RunDeployment, ...);
// calls are safe for concurrent use and multiplexed on one connection, and
// Subscribe hands each subscription's notifications to its own subscriber.
// A Client is the Backend of the MCP face for `mcpflow mcp`.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/mcpflow/mcpflow/api/jsonrpc"
)

// ErrClosed is returned by calls on a closed client or a lost connection.
var ErrClosed = errors.New("mcpflow client: connection closed")

// Client is one WebSocket connection to mcpflow.
type Client struct {
	ws      *websocket.Conn
	writeMu sync.Mutex // gorilla allows one writer at a time
	nextID  atomic.Int64

	mu      sync.Mutex
	pending map[string]*pendingCall
	// routes are the subscriptions opened by Subscribe, by subscription
	// id: their notifications go to their deliver, not to notified.
	routes map[string]*route
	err    error // set once the reader stops
	done   chan struct{}
	// notified receives the server's notifications that no route takes
	// (see OnNotification).
	notified atomic.Pointer[func(Notification)]
}

// pendingCall is a request awaiting its reply; sub is set for a
// Subscribe request, whose reply the reader itself opens a route for.
type pendingCall struct {
	ch  chan response // buffered 1: the reader never waits on it
	sub *route
}

// response is a frame from the server: a response, or a notification
// (a method and no id).
type response struct {
	Result json.RawMessage `json:"result"`
	Error  *jsonrpc.Error  `json:"error"`
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	// decodeErr is the reader's, for a Subscribe reply it decoded.
	decodeErr error
}

// Notification is a notification the server pushes to a subscription
// (workflow.runs.event, workflow.runs.lagged, workflow.admin.event,
// workflow.admin.lagged): decode Params as the protocol's
// RunEventNotification, AdminEventNotification or LaggedNotification.
type Notification struct {
	Method string
	Params json.RawMessage
}

// OnNotification has fn called with each notification the server pushes,
// in the order they arrive, except those of the subscriptions opened with
// [Client.Subscribe], which go to theirs; set it before subscribing. fn
// runs on the
// connection's reader: while it runs no reply is read, so it should hand
// the notification on and return (a client that reads slowly makes the
// server end its subscriptions with a lag notification). nil drops
// notifications.
func (c *Client) OnNotification(fn func(Notification)) {
	if fn == nil {
		c.notified.Store(nil)
		return
	}
	c.notified.Store(&fn)
}

// Dial connects to url, e.g. ws://127.0.0.1:8765/ws.
func Dial(ctx context.Context, url string) (*Client, error) {
	return DialToken(ctx, url, "")
}

// DialToken connects to url sending token as its bearer token (none when
// ""). A refused handshake's error carries the server's JSON-RPC error
// (-32001 or -32003).
func DialToken(ctx context.Context, url, token string) (*Client, error) {
	header := http.Header{}
	if token != "" {
		header.Set("Authorization", "Bearer "+token)
	}
	ws, resp, err := websocket.DefaultDialer.DialContext(ctx, url, header)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", url, refusal(resp, err))
	}
	c := &Client{ws: ws, pending: map[string]*pendingCall{}, routes: map[string]*route{}, done: make(chan struct{})}
	go c.read()
	return c, nil
}

// refusal is the JSON-RPC error a refused handshake's body holds, or err.
func refusal(resp *http.Response, err error) error {
	if resp == nil || resp.Body == nil {
		return err
	}
	defer resp.Body.Close()
	var reply struct {
		Error *jsonrpc.Error `json:"error"`
	}
	if json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&reply) != nil || reply.Error == nil {
		return err
	}
	return fmt.Errorf("%s: %w", resp.Status, reply.Error)
}

// Close closes the connection; pending calls fail with ErrClosed.
func (c *Client) Close() error {
	// Not under writeMu: gorilla allows WriteControl and Close concurrently
	// with a write, and a write blocked on a peer that does not read must
	// not keep Close waiting.
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	err := c.ws.Close()
	<-c.done
	return err
}

// read dispatches responses to their callers until the connection ends.
func (c *Client) read() {
	defer close(c.done)
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			c.fail(fmt.Errorf("%w: %v", ErrClosed, err))
			return
		}
		var r response
		if err := json.Unmarshal(data, &r); err != nil {
			continue // not a response to us (a batch reply)
		}
		if r.Method != "" && len(r.ID) == 0 {
			if c.route(r.Method, r.Params) {
				continue
			}
			if fn := c.notified.Load(); fn != nil {
				(*fn)(Notification{Method: r.Method, Params: r.Params})
			}
			continue
		}
		c.mu.Lock()
		pc, ok := c.pending[string(r.ID)]
		delete(c.pending, string(r.ID))
		c.mu.Unlock()
		if !ok {
			continue
		}
		if pc.sub != nil {
			// Before the next frame is read: the subscription's
			// notifications follow its reply.
			r.decodeErr = c.open(pc.sub, r)
		}
		pc.ch <- r
	}
}

// Done is closed once the connection has ended (Close, or lost).
func (c *Client) Done() <-chan struct{} { return c.done }

func (c *Client) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.err = err
	for id, pc := range c.pending {
		close(pc.ch)
		delete(c.pending, id)
	}
	for id, rt := range c.routes {
		rt.stop()
		delete(c.routes, id)
	}
}

// Call invokes method with params and decodes the result into result
// (which may be nil). A JSON-RPC error is returned as *jsonrpc.Error.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	id, ch, err := c.send(ctx, method, params, nil)
	if err != nil {
		return err
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return fmt.Errorf("%s: %w", method, c.closedErr())
		}
		if r.Error != nil {
			return r.Error
		}
		if result == nil {
			return nil
		}
		if err := json.Unmarshal(r.Result, result); err != nil {
			return fmt.Errorf("%s: decode result: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		c.forget(id)
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// send writes the request method(params) and returns its id and the
// channel its reply will come on (closed if the connection ends first).
// sub is set for a Subscribe request.
func (c *Client) send(ctx context.Context, method string, params any, sub *route) (string, chan response, error) {
	if params == nil {
		params = struct{}{}
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return "", nil, fmt.Errorf("%s: encode params: %w", method, err)
	}
	id := strconv.FormatInt(c.nextID.Add(1), 10)
	frame, err := json.Marshal(map[string]any{"jsonrpc": jsonrpc.Version, "id": json.RawMessage(id), "method": method, "params": json.RawMessage(raw)})
	if err != nil {
		return "", nil, fmt.Errorf("%s: encode request: %w", method, err)
	}
	ch := make(chan response, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return "", nil, fmt.Errorf("%s: %w", method, c.err)
	}
	c.pending[id] = &pendingCall{ch: ch, sub: sub}
	c.mu.Unlock()

	c.writeMu.Lock()
	if d, ok := ctx.Deadline(); ok {
		_ = c.ws.SetWriteDeadline(d)
	} else {
		_ = c.ws.SetWriteDeadline(time.Time{})
	}
	err = c.ws.WriteMessage(websocket.TextMessage, frame)
	c.writeMu.Unlock()
	if err != nil {
		c.forget(id)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return "", nil, fmt.Errorf("%s: send: %w", method, ctxErr)
		}
		// gorilla write errors are permanent: the connection is lost.
		return "", nil, fmt.Errorf("%s: send: %w: %v", method, ErrClosed, err)
	}
	return id, ch, nil
}

func (c *Client) forget(id string) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

func (c *Client) closedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	return ErrClosed
}
