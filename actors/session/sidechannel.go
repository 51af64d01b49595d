package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sideConn is a stdio session's connection as go-sdk gets it, with a side
// channel of mcpflow's own: the requests go-sdk v1.8.0 has no API for
// (MCP tasks: a task-augmented tools/call, tasks/get, tasks/result,
// tasks/cancel, and a tools/list read for each tool's
// execution.taskSupport) are written on the same connection, under ids
// of a namespace go-sdk never uses (strings "mcpflow-side-N"; go-sdk
// numbers its requests), and their answers are taken out of the read
// stream before go-sdk sees them. A notifications/tasks/status is taken
// out too and wakes the poller of its task (see taskWake).
//
// It is bounded: at most maxSidePending requests wait at once, each until
// its context ends or the connection does; the connection's end (a read
// that fails, a close) fails every one waiting.
type sideConn struct {
	mcp.Connection
	wake *taskWake

	mu      sync.Mutex
	next    uint64
	pending map[string]chan *jsonrpc.Response
	ended   chan struct{}
	endErr  error
	endOnce sync.Once
}

// sideIDPrefix starts the id of every side channel request.
const sideIDPrefix = "mcpflow-side-"

// maxSidePending bounds the side channel's requests waiting at once on
// one connection.
const maxSidePending = 256

// errSideBusy is a side channel request refused at its bound.
var errSideBusy = errors.New("too many task requests waiting on this session")

func newSideConn(c mcp.Connection, wake *taskWake) *sideConn {
	return &sideConn{Connection: c, wake: wake, pending: map[string]chan *jsonrpc.Response{}, ended: make(chan struct{})}
}

func (c *sideConn) waker() *taskWake { return c.wake }

// Read hands go-sdk the next message that is not the side channel's.
func (c *sideConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			c.end(err)
			return nil, err
		}
		switch m := msg.(type) {
		case *jsonrpc.Response:
			if c.deliver(m) {
				continue
			}
		case *jsonrpc.Request:
			if !m.IsCall() && m.Method == methodTaskStatus {
				c.wake.status(m.Params)
				continue
			}
		}
		return msg, nil
	}
}

// Close ends the connection and the requests waiting on it.
func (c *sideConn) Close() error {
	c.end(errors.New("the session closed"))
	return c.Connection.Close()
}

// end fails the waiting requests with err, once.
func (c *sideConn) end(err error) {
	c.endOnce.Do(func() {
		c.mu.Lock()
		c.endErr = err
		c.mu.Unlock()
		close(c.ended)
	})
}

// deliver hands resp to the side channel request it answers, reporting
// whether it answers one.
func (c *sideConn) deliver(resp *jsonrpc.Response) bool {
	id, ok := resp.ID.Raw().(string)
	if !ok || !strings.HasPrefix(id, sideIDPrefix) {
		return false
	}
	c.mu.Lock()
	ch := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if ch != nil {
		ch <- resp // buffered: never blocks
	}
	return true // an answer to a request that gave up is ours all the same
}

// call sends method with params on the side channel and waits for its
// answer's result: a JSON-RPC error answer is a *jsonrpc.Error, as
// go-sdk's own requests fail.
func (c *sideConn) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("%s: encode params: %w", method, err)
	}
	c.mu.Lock()
	if len(c.pending) >= maxSidePending {
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: %w (%d)", method, errSideBusy, maxSidePending)
	}
	c.next++
	id := sideIDPrefix + strconv.FormatUint(c.next, 10)
	ch := make(chan *jsonrpc.Response, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	rid, _ := jsonrpc.MakeID(id) // a string is always an id
	if err := c.Connection.Write(ctx, &jsonrpc.Request{ID: rid, Method: method, Params: raw}); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case resp := <-ch:
		if resp.Error != nil {
			return nil, fmt.Errorf("%s: %w", method, resp.Error)
		}
		return resp.Result, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	case <-c.ended:
		c.mu.Lock()
		err := c.endErr
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: the connection ended: %w", method, err)
	}
}
