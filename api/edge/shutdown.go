package edge

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mcpflow/mcpflow/api/jsonrpc"
)

// tracker counts what is in flight at the edge, requests and WebSocket
// connections, until Shutdown closes it; from then on nothing new enters.
type tracker struct {
	mu       sync.Mutex
	closed   bool
	requests sync.WaitGroup
	conns    sync.WaitGroup
}

// enter counts one more in wg, unless the edge is shutting down.
func (t *tracker) enter(wg *sync.WaitGroup) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	wg.Add(1)
	return true
}

// isClosed reports whether Shutdown has begun.
func (t *tracker) isClosed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closed
}

func (t *tracker) close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
}

// waitFor returns a channel closed once wg is zero. Call it only after
// close, when nothing adds to wg any more.
func waitFor(wg *sync.WaitGroup) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	return done
}

// Shutdown stops the edge. New WebSocket connections, HTTP requests and
// WebSocket requests are refused at once (-32000, "shutting down"); the
// requests in flight get until grace has passed to be answered; then
// every WebSocket connection is closed (1001, going away) and the handlers
// still running see their context cancelled. It returns once every
// handler and connection is done, or with an error when ctx ends first.
// Stop the HTTP server's listener besides (http.Server.Shutdown): the
// edge does not own it.
func (s *Server) Shutdown(ctx context.Context, grace time.Duration) error {
	s.track.close()
	requests := waitFor(&s.track.requests)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-requests:
	case <-timer.C:
	case <-ctx.Done():
	}
	s.close()
	select {
	case <-requests:
	case <-ctx.Done():
		return fmt.Errorf("edge: requests still running: %w", ctx.Err())
	}
	select {
	case <-waitFor(&s.track.conns):
		return nil
	case <-ctx.Done():
		return fmt.Errorf("edge: connections still open: %w", ctx.Err())
	}
}

// shuttingDown answers a request that arrived after Shutdown began.
func shuttingDown(id jsonrpc.ID) jsonrpc.Response {
	return jsonrpc.NewError(id, jsonrpc.Errorf(jsonrpc.Overloaded, "mcpflow is shutting down"))
}

// refuse answers every request of a frame that arrived after Shutdown
// began, in frame order, notifications not at all.
func refuse(f jsonrpc.Frame) []jsonrpc.Response {
	var responses []jsonrpc.Response
	for _, e := range f.Entries {
		switch {
		case e.Rejected != nil:
			responses = append(responses, *e.Rejected)
		case !e.Request.IsNotification():
			responses = append(responses, shuttingDown(e.Request.ID))
		}
	}
	return responses
}
