package session_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// mortalServer is a streamable HTTP endpoint the test can kill.
type mortalServer struct {
	*httptest.Server
	dead atomic.Bool

	holdGets atomic.Bool  // hold each GET until the server dies
	held     atomic.Int32 // the GETs held so far
}

// die ends the server as a crash would, at once: it answers nothing more,
// on a connection still open either, and its listener and connections
// close. The flag comes first because CloseClientConnections closes the
// connections each on a goroutine of its own, in no order: without it, a
// ping the closed notification stream sent could reach a connection not
// yet closed, and a live handler would answer it.
func (s *mortalServer) die(t *testing.T) {
	t.Helper()
	s.dead.Store(true)
	is.New(t).NoErr(s.Listener.Close()) // nothing connects again
	s.CloseClientConnections()
}

// openOverHTTP opens a session to a streamable HTTP endpoint of its own,
// with no keepalive tick during the test: whatever notices the server's
// fate is the end of the session's notification stream.
func openOverHTTP(t *testing.T) (*harness, *mortalServer) {
	t.Helper()
	server := fakes.NewServer()
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	upstream := &mortalServer{}
	upstream.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && upstream.holdGets.Load() {
			upstream.held.Add(1)
			<-r.Context().Done() // its connection closes as the server dies
		}
		if upstream.dead.Load() {
			panic(http.ErrAbortHandler) // a dead server answers nothing: the connection just ends
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(upstream.Close)
	conn := config.Connection{Kind: "mcp", ID: connID, Transport: config.Transport{Kind: config.TransportHTTP, URL: upstream.URL}}
	opts := testOptions()
	opts.KeepAlive, opts.PingTimeout = time.Hour, time.Second
	h := spawnConnWithParent(t, conn, session.HTTP{}, opts)
	is.New(t).NoErr(await(t, send(h.engine, h.pid, "counter", nil, patience)).Error.Err())
	h.waitState(t, session.StateConnecting)
	h.waitState(t, session.StateOpen)
	return h, upstream
}

func TestAnHTTPSessionWhoseServerDiedIsDroppedWithoutWaitingForAKeepalive(t *testing.T) {
	is := is.New(t)
	h, upstream := openOverHTTP(t)
	upstream.die(t)                                                             // the notification stream's connection with the rest
	st := h.waitState(t, session.StateConnecting)                               // at once: the session had answered a call
	is.True(strings.Contains(st.LastError, "keepalive failed: session closed")) // the ping the stream's end sent found it
	h.waitState(t, session.StateBackoff)                                        // the server is gone: the new connect fails
}

func TestACutNotificationStreamKeepsItsSession(t *testing.T) {
	is := is.New(t)
	h, upstream := openOverHTTP(t)
	opened := liveStatus(t, h.engine, h.pid).LastSuccessAt
	upstream.CloseClientConnections() // a proxy cuts the stream; the server lives on

	// The stream's end sends a ping, which the server answers.
	poll.For(t, "a ping checked the session after the cut", patience, func() bool {
		return liveStatus(t, h.engine, h.pid).LastSuccessAt.After(opened)
	})
	st := liveStatus(t, h.engine, h.pid)
	is.Equal(st.State, session.StateOpen) // the session is kept
	is.Equal(st.Generation, int64(1))
	r := await(t, send(h.engine, h.pid, "counter", nil, patience))
	is.NoErr(r.Error.Err())
	is.Equal(fakes.ToolOutput(t, r)["count"], float64(2)) // on the same upstream session
}

func TestAServerThatDiesBeforeItsCutStreamIsReopenedIsNoticedAtOnce(t *testing.T) {
	is := is.New(t)
	h, upstream := openOverHTTP(t)
	opened := liveStatus(t, h.engine, h.pid).LastSuccessAt
	upstream.holdGets.Store(true)
	upstream.CloseClientConnections() // a proxy cuts the stream; the ping its end sends is answered
	poll.For(t, "a ping checked the session after the cut", patience, func() bool {
		return liveStatus(t, h.engine, h.pid).LastSuccessAt.After(opened)
	})
	poll.For(t, "go-sdk reopening the stream", patience, func() bool { return upstream.held.Load() > 0 })

	upstream.die(t)                                                             // before the stream is open again: its GET fails
	st := h.waitState(t, session.StateConnecting)                               // at once, not after go-sdk's retries or a keepalive
	is.True(strings.Contains(st.LastError, "keepalive failed: session closed")) // the ping the failed reopen sent found it
}
