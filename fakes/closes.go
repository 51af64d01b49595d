package fakes

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
)

// CloseObserver wraps a transport factory and reports each client
// connection that gets closed: the observable end of an upstream session.
type CloseObserver struct {
	inner  transportFactory
	closed chan struct{} // one value per closed connection
	count  atomic.Int64
}

// ObserveCloses wraps inner.
func ObserveCloses(inner transportFactory) *CloseObserver {
	return &CloseObserver{inner: inner, closed: make(chan struct{}, 64)}
}

// NewTransport returns inner's transport, observed.
func (o *CloseObserver) NewTransport(conn config.Connection) (mcp.Transport, error) {
	t, err := o.inner.NewTransport(conn)
	if err != nil {
		return nil, err
	}
	return &observedTransport{inner: t, observer: o}, nil
}

// Closed is how many connections have closed so far; it does not wait.
func (o *CloseObserver) Closed() int { return int(o.count.Load()) }

// WaitClosed waits, up to timeout, for n more closed connections.
func (o *CloseObserver) WaitClosed(t testing.TB, n int, timeout time.Duration) {
	is := is.New(t)
	is.Helper()
	deadline := time.After(timeout)
	for i := range n {
		select {
		case <-o.closed:
		case <-deadline:
			t.Logf("%d of %d upstream connections closed within %s", i, n, timeout)
			is.Fail() // upstream connections still open
		}
	}
}

type observedTransport struct {
	inner    mcp.Transport
	observer *CloseObserver
}

func (t *observedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &observedConn{Connection: c, observer: t.observer}, nil
}

// Kill ends the peer when the wrapped transport can.
func (t *observedTransport) Kill() error {
	if k, ok := t.inner.(killer); ok {
		return k.Kill()
	}
	return nil
}

type observedConn struct {
	mcp.Connection
	once     sync.Once
	observer *CloseObserver
}

func (c *observedConn) Close() error {
	err := c.Connection.Close()
	c.once.Do(func() {
		c.observer.count.Add(1)
		c.observer.closed <- struct{}{}
	})
	return err
}
