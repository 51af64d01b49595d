package edge

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/mcpflow/mcpflow/api/jsonrpc"
)

// slots bounds what runs at once: one token per request (or run).
type slots chan struct{}

// errNoSlot reports a wait for a slot that reached the request's deadline.
var errNoSlot = errors.New("no free slot before the deadline")

// tryAcquire takes a slot if one is free; it never waits.
func (s slots) tryAcquire() bool {
	select {
	case s <- struct{}{}:
		return true
	default:
		return false
	}
}

// acquire takes a slot, waiting for one until deadline (errNoSlot) or
// until ctx ends (its error).
func (s slots) acquire(ctx context.Context, deadline time.Time) error {
	if s.tryAcquire() {
		return nil
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case s <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return errNoSlot
	}
}

// release frees a slot taken by acquire or tryAcquire.
func (s slots) release() { <-s }

// clients holds, per client address, what it has open: WebSocket
// connections and /rpc requests being served (bounded by limit), and the
// in-flight slots its /rpc requests share.
type clients struct {
	limit, inFlight int
	mu              sync.Mutex
	byAddr          map[string]*client
}

// client is one address's share. It is removed once nothing is open.
type client struct {
	open  int
	slots slots
}

// admit counts one more connection or request for addr, unless the
// address already holds limit of them.
func (c *clients) admit(addr string) (*client, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl := c.byAddr[addr]
	if cl == nil {
		cl = &client{slots: make(slots, c.inFlight)}
		c.byAddr[addr] = cl
	}
	if cl.open >= c.limit {
		return nil, false
	}
	cl.open++
	return cl, true
}

// leave undoes one admit.
func (c *clients) leave(addr string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl := c.byAddr[addr]
	if cl == nil {
		return
	}
	cl.open--
	if cl.open <= 0 {
		delete(c.byAddr, addr)
	}
}

// size returns the number of addresses with something open (for tests).
func (c *clients) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byAddr)
}

// clientAddr is the address limits are kept per: the peer's IP. Proxies'
// forwarding headers are not trusted.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// refuseClient answers an upgrade or a POST from an address that holds
// MaxConnsPerClient already: HTTP 429 with a -32000 body.
func (s *Server) refuseClient(w http.ResponseWriter, addr string) {
	w.Header().Set("Retry-After", "1")
	refuseHTTP(w, http.StatusTooManyRequests, jsonrpc.Errorf(jsonrpc.Overloaded,
		"too many connections and requests from %s at once: limit %d", addr, s.opts.MaxConnsPerClient))
}

// stopReading makes a request whose body will not be read end its
// connection after the reply: net/http would otherwise try to drain the
// body first, and wait on a client that stalls in it.
func stopReading(w http.ResponseWriter) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	w.Header().Set("Connection", "close")
}
