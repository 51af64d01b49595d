package edge_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// shutdown runs srv.Shutdown with grace in a goroutine.
func shutdown(srv interface {
	Shutdown(context.Context, time.Duration) error
}, grace time.Duration) <-chan error {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		done <- srv.Shutdown(ctx, grace)
	}()
	return done
}

// TestShutdownAnswersRequestsInFlightAndRefusesNewOnes: a request in
// flight when Shutdown begins is answered within the grace; one that
// arrives after is refused at once (-32000); then the connection closes
// and Shutdown returns.
func TestShutdownAnswersRequestsInFlightAndRefusesNewOnes(t *testing.T) {
	is := is.New(t)
	f := newFixture()
	srv, hs := start(t, f, testOptions())
	c := dial(t, hs)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"test.slow"}`)
	f.waitStarted(t, 1)
	done := shutdown(srv, wait)

	// Refused once Shutdown has begun (it may take a moment to begin).
	refused := poll.Value(t, "Shutdown begins", wait, func() (response, bool) {
		r := c.call("2", "test.fast", "")
		if code(r) != jsonrpc.Overloaded {
			is.Equal(string(r.Result), `"fast"`) // served until then
		}
		return r, code(r) == jsonrpc.Overloaded
	})
	is.True(strings.Contains(string(refused.Error.Data), "shutting down")) // refused: shutting down
	close(f.release)
	r := c.recv()
	is.Equal(string(r.ID), "1")
	is.Equal(string(r.Result), `"slow"`) // the request in flight was answered
	select {
	case err := <-done:
		is.NoErr(err) // Shutdown returns once everything is done
	case <-time.After(wait):
		is.Fail() // Shutdown returns
	}
	_ = c.ws.SetReadDeadline(time.Now().Add(wait))
	_, _, err := c.ws.ReadMessage()
	is.True(websocket.IsCloseError(err, websocket.CloseGoingAway)) // then the server says goodbye

	resp, err := http.Get(hs.URL + "/ws")
	is.NoErr(err)
	resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusServiceUnavailable) // no new connection
}

// TestShutdownCancelsHandlersAfterTheGrace: a POST /rpc whose handler
// outlives the grace sees its context cancelled and is answered -32000,
// so Shutdown (and http.Server.Shutdown) need not wait for it.
func TestShutdownCancelsHandlersAfterTheGrace(t *testing.T) {
	is := is.New(t)
	f := newFixture()
	srv, hs := start(t, f, testOptions())
	type answer struct {
		body []byte
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := http.Post(hs.URL+"/rpc", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"test.slow"}`))
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		answered <- answer{body: body, err: err}
	}()
	f.waitStarted(t, 1)
	start := time.Now()
	done := shutdown(srv, 50*time.Millisecond)
	select {
	case err := <-done:
		is.NoErr(err) // Shutdown returns once the cut-short handler has
	case <-time.After(wait):
		is.Fail() // Shutdown returns
	}
	is.True(time.Since(start) < wait/2) // without waiting for the handler
	a := <-answered
	is.NoErr(a.err)
	r := decode(t, a.body)
	is.Equal(string(r.ID), "7")
	is.Equal(code(r), jsonrpc.Overloaded) // answered: cut short by the shutdown
	status, _, body := post(t, hs, `{"jsonrpc":"2.0","id":8,"method":"test.fast"}`)
	is.Equal(status, http.StatusOK)
	is.Equal(code(decode(t, body)), jsonrpc.Overloaded) // new requests are refused
}
