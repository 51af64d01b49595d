package session_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes"
)

// forgetfulServer is a streamable HTTP MCP endpoint that can forget its
// sessions and then answers their requests as some servers do: with a
// status (400 or 404) and a JSON-RPC error body, which go-sdk does not
// report as mcp.ErrSessionMissing.
type forgetfulServer struct {
	*httptest.Server
	status int

	mu        sync.Mutex
	forgotten map[string]bool
	last      string // the latest session id a request carried
}

func newForgetfulServer(t *testing.T, status int) *forgetfulServer {
	s := &forgetfulServer{status: status, forgotten: map[string]bool{}}
	server := fakes.NewServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("Mcp-Session-Id")
		s.mu.Lock()
		gone := s.forgotten[id]
		if id != "" && !gone {
			s.last = id
		}
		s.mu.Unlock()
		if gone {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(s.status)
			fmt.Fprint(w, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// forget makes the server forget the latest session.
func (s *forgetfulServer) forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgotten[s.last] = true
}

func TestAnHTTPSessionRefusedWith400Or404IsReplacedAndTheCallReplayed(t *testing.T) {
	for _, status := range []int{http.StatusBadRequest, http.StatusNotFound} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			is := is.New(t)
			upstream := newForgetfulServer(t, status)
			conn := config.Connection{Kind: "mcp", ID: connID, Transport: config.Transport{Kind: config.TransportHTTP, URL: upstream.URL}}
			e := newEngine(t)
			pid := e.Spawn(session.New(conn, session.HTTP{}, testOptions()), "session")
			t.Cleanup(func() { stop(t, e, pid) })

			r := call(t, e, pid, "counter", nil)
			is.NoErr(r.Error.Err())
			is.Equal(r.Generation, int64(1))
			upstream.forget()

			// The server refused the call for its session without running
			// it: the call is replayed on a new session.
			r = call(t, e, pid, "counter", nil)
			is.NoErr(r.Error.Err())
			is.Equal(r.Generation, int64(2))
			is.Equal(fakes.ToolOutput(t, r)["count"], 2.0) // one server, so its counter went on: the refused call did not run
			is.Equal(liveStatus(t, e, pid).SessionsOpened, 2)
		})
	}
}

func TestAnHTTPSourceThatRefusesConnectionsIsNotReportedOpen(t *testing.T) {
	is := is.New(t)
	server := fakes.NewServer()
	upstream := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	conn := config.Connection{Kind: "mcp", ID: connID, Transport: config.Transport{
		Kind: config.TransportHTTP, URL: upstream.URL + "/mcp?token=query-s3cret",
		Headers: map[string]string{"Authorization": "Bearer header-s3cret"},
	}}
	e := newEngine(t)
	pid := e.Spawn(session.New(conn, session.HTTP{}, testOptions()), "session")
	t.Cleanup(func() { stop(t, e, pid) })
	is.NoErr(call(t, e, pid, "counter", nil).Error.Err())
	is.Equal(liveStatus(t, e, pid).State, session.StateOpen)

	upstream.CloseClientConnections()
	upstream.Close() // from now on, connections are refused
	r := await(t, send(e, pid, "counter", nil, 300*time.Millisecond))
	if errors.Is(r.Error.Err(), session.ErrSessionLost) {
		// It went out on a pooled connection the server had closed (the
		// session's pool is its own: httptest's Close empties only
		// http.DefaultTransport's). That ended the session and its pool.
		r = await(t, send(e, pid, "counter", nil, 300*time.Millisecond))
	}
	is.True(errors.Is(r.Error.Err(), session.ErrDeadline)) // it waited for a reconnect that could not happen
	st := liveStatus(t, e, pid)
	is.True(st.State != session.StateOpen) // the session is known to be down
	is.True(strings.Contains(st.LastError, "refused"))
	is.True(!strings.Contains(st.LastError, "s3cret")) // no secret in the status
	is.True(!strings.Contains(r.Error.Err().Error(), "s3cret"))
	is.True(st.Restarts > 0)
}
