package session_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes"
)

// restartableServer is a streamable HTTP MCP endpoint whose server can be
// replaced, as if the upstream process restarted and forgot its sessions.
type restartableServer struct {
	handler atomic.Pointer[http.Handler]
	*httptest.Server
}

func newRestartableServer(t *testing.T) *restartableServer {
	s := &restartableServer{}
	s.restart()
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*s.handler.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *restartableServer) restart() {
	server := fakes.NewServer()
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	s.handler.Store(&h)
}

func TestRestartedHTTPServerIsReachedThroughAFreshSession(t *testing.T) {
	is := is.New(t)
	upstream := newRestartableServer(t)
	conn := config.Connection{Kind: "mcp", ID: connID, Transport: config.Transport{Kind: config.TransportHTTP, URL: upstream.URL}}
	e := newEngine(t)
	pid := e.Spawn(session.New(conn, session.HTTP{}, testOptions()), "session")
	t.Cleanup(func() { stop(t, e, pid) })

	is.Equal(mustCall(t, e, pid, "counter", nil)["count"], float64(1))
	is.Equal(mustCall(t, e, pid, "counter", nil)["count"], float64(2))
	upstream.restart() // the upstream forgets every session

	// The server refused the call (404: unknown session) without running
	// it, so the session actor may replay it on a fresh session.
	r := call(t, e, pid, "counter", nil)
	is.NoErr(r.Error.Err())
	is.Equal(fakes.ToolOutput(t, r)["count"], float64(1)) // a new upstream session, with fresh state
}

func TestALegacySSEServerKeepsItsSessionAcrossCalls(t *testing.T) {
	is := is.New(t)
	server := fakes.NewServer()
	upstream := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(upstream.Close)
	conn := config.Connection{Kind: "mcp", ID: connID, Transport: config.Transport{Kind: config.TransportSSE, URL: upstream.URL}}
	opts := testOptions()
	opts.ProtocolVersion = "2024-11-05" // the HTTP+SSE era
	e := newEngine(t)
	pid := e.Spawn(session.New(conn, session.HTTP{}, opts), "session")
	t.Cleanup(func() { stop(t, e, pid) })

	is.Equal(mustCall(t, e, pid, "counter", nil)["count"], float64(1))
	is.Equal(mustCall(t, e, pid, "counter", nil)["count"], float64(2)) // one session, its state kept
}
