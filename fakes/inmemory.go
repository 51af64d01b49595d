package fakes

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
)

// InMemory is a session.TransportFactory whose upstreams are in-process MCP
// servers: every NewTransport starts a new server, so each session has its
// own server state. Its transports implement session.Killer. Safe for
// concurrent use.
type InMemory struct {
	newServer func() *mcp.Server

	mu        sync.Mutex
	upstreams []upstream
}

// upstream is one server connected by NewTransport.
type upstream struct {
	session *mcp.ServerSession
	cut     func() // ends the connection at once, in-flight calls included
}

// NewInMemory returns a factory that builds each upstream with newServer
// (NewServer if nil).
func NewInMemory(newServer func() *mcp.Server) *InMemory {
	if newServer == nil {
		newServer = NewServer
	}
	return &InMemory{newServer: newServer}
}

// NewTransport connects a new server to one end of an in-memory pipe and
// returns the other end, which a session reads as it reads a stdio
// server's pipe (it is a session.LineStream). conn is ignored.
func (m *InMemory) NewTransport(config.Connection) (mcp.Transport, error) {
	serverPipe, clientPipe := net.Pipe()
	serverEnd := &mcp.IOTransport{Reader: serverPipe, Writer: serverPipe}
	ctx := context.Background()
	// Connect the server's end here (it cannot fail for an in-memory pipe),
	// so that closing it can cut the connection: crash and Kill do that.
	conn, err := serverEnd.Connect(ctx)
	if err != nil {
		return nil, err
	}
	cut := func() { _ = conn.Close() }
	ctx = context.WithValue(ctx, cutKey{}, cut)
	// The server must be connected before the client, which initializes.
	ss, err := m.newServer().Connect(ctx, connected{conn}, nil)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.upstreams = append(m.upstreams, upstream{session: ss, cut: cut})
	m.mu.Unlock()
	return &inMemoryTransport{pipe: clientPipe, cut: cut}, nil
}

// KillAll cuts every connection at once, as if every upstream died: in-flight
// calls fail and each ClientSession.Wait returns.
func (m *InMemory) KillAll() {
	for _, u := range m.snapshot() {
		u.cut()
	}
}

// CloseServers closes every server session gracefully: in-flight calls
// finish, then the connections close and each ClientSession.Wait returns.
func (m *InMemory) CloseServers() error {
	var errs []error
	for _, u := range m.snapshot() {
		errs = append(errs, u.session.Close())
	}
	return errors.Join(errs...)
}

func (m *InMemory) snapshot() []upstream {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]upstream(nil), m.upstreams...)
}

// connected is a Transport whose connection is already established.
type connected struct{ conn mcp.Connection }

func (c connected) Connect(context.Context) (mcp.Connection, error) { return c.conn, nil }

// inMemoryTransport is the client end returned by InMemory.NewTransport.
type inMemoryTransport struct {
	pipe net.Conn
	cut  func()
}

var _ session.LineStream = (*inMemoryTransport)(nil)

// Connect connects over the pipe as go-sdk's in-memory transport does.
func (t *inMemoryTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	return (&mcp.IOTransport{Reader: t.pipe, Writer: t.pipe}).Connect(ctx)
}

// ConnectStream implements session.LineStream: the session reads and
// writes the pipe itself.
func (t *inMemoryTransport) ConnectStream(context.Context) (io.Reader, io.WriteCloser, error) {
	return t.pipe, t.pipe, nil
}

// Kill implements session.Killer: it ends the upstream at once.
func (t *inMemoryTransport) Kill() error {
	t.cut()
	return nil
}

// Handing returns a newServer for NewInMemory that builds each server with
// build (NewServer if nil) and hands it to the returned channel (room for
// one), so that a test can change the server its session talks to.
func Handing(build func() *mcp.Server) (newServer func() *mcp.Server, servers <-chan *mcp.Server) {
	if build == nil {
		build = NewServer
	}
	made := make(chan *mcp.Server, 1)
	return func() *mcp.Server {
		s := build()
		made <- s
		return s
	}, made
}
