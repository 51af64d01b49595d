package fakes

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
)

// transportFactory and killer restate session.TransportFactory and
// session.Killer, so that fakes does not import session and session's own
// in-package tests may import fakes.
type transportFactory interface {
	NewTransport(conn config.Connection) (mcp.Transport, error)
}

type killer interface{ Kill() error }

// ToolCall is one tools/call request a client sent.
type ToolCall struct {
	Connection string          // the config.Connection ID
	Name       string          // the tool name
	Arguments  json.RawMessage // canonical JSON: compact, sorted keys; {} if absent
}

// Recording is a session.TransportFactory that wraps another one and records
// what flows through it: the sessions connected and the tools/call requests
// sent. It forwards session.Killer. Safe for concurrent use.
//
// Its connections hide the SDK's unexported client hooks, so wrap in-process
// or stdio factories; over streamable HTTP the standalone SSE stream of
// pre-2026 sessions would not start.
type Recording struct {
	inner transportFactory

	mu       sync.Mutex
	sessions int
	calls    []ToolCall
	changed  chan struct{} // closed and replaced when calls grows
}

// NewRecording wraps inner, any session.TransportFactory: typically an
// InMemory or a session.Factories.
func NewRecording(inner transportFactory) *Recording {
	return &Recording{inner: inner, changed: make(chan struct{})}
}

// NewTransport returns inner's transport for conn, wrapped for recording.
func (r *Recording) NewTransport(conn config.Connection) (mcp.Transport, error) {
	t, err := r.inner.NewTransport(conn)
	if err != nil {
		return nil, err
	}
	rt := &recordingTransport{inner: t, rec: r, connID: conn.ID}
	if k, ok := t.(killer); ok {
		return &killableRecordingTransport{rt, k}, nil
	}
	return rt, nil
}

// SessionsCreated counts the transports whose Connect succeeded.
func (r *Recording) SessionsCreated() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sessions
}

// ToolCalls returns the tools/call requests sent so far, in order.
func (r *Recording) ToolCalls() []ToolCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]ToolCall(nil), r.calls...)
}

// WaitForToolCalls waits until at least n tools/call requests have been sent
// and reports whether that happened within timeout.
func (r *Recording) WaitForToolCalls(n int, timeout time.Duration) bool {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		r.mu.Lock()
		got, changed := len(r.calls), r.changed
		r.mu.Unlock()
		if got >= n {
			return true
		}
		select {
		case <-changed:
		case <-timer.C:
			return false
		}
	}
}

func (r *Recording) connected() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sessions++
}

func (r *Recording) record(call ToolCall) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call)
	close(r.changed)
	r.changed = make(chan struct{})
}

type recordingTransport struct {
	inner  mcp.Transport
	rec    *Recording
	connID string
}

func (t *recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.rec.connected()
	return &recordingConn{Connection: conn, transport: t}, nil
}

type killableRecordingTransport struct {
	*recordingTransport
	killer killer
}

func (t *killableRecordingTransport) Kill() error { return t.killer.Kill() }

// recordingConn records each tools/call request before writing it, so a
// call is on record before its response can arrive.
type recordingConn struct {
	mcp.Connection
	transport *recordingTransport
}

func (c *recordingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/call" {
		var params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(req.Params, &params) // a malformed call is recorded with what decodes
		c.transport.rec.record(ToolCall{
			Connection: c.transport.connID,
			Name:       params.Name,
			Arguments:  canonical(params.Arguments),
		})
	}
	return c.Connection.Write(ctx, msg)
}

// canonical re-encodes a JSON value compactly, with sorted object keys and
// numbers as sent; absent or null arguments become {}.
func canonical(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw // not JSON: keep it as sent
	}
	if v == nil {
		return json.RawMessage("{}")
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return raw
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}
