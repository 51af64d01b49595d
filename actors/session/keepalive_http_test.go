package session_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes"
)

// staleOnce fails the next ping it carries as a pooled connection the
// server closed while it was idle does: io.EOF, the request unanswered.
type staleOnce struct {
	armed atomic.Bool
	inner http.RoundTripper
}

func (s *staleOnce) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil && s.armed.Load() {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"method":"ping"`)) && s.armed.CompareAndSwap(true, false) {
			return nil, io.EOF
		}
	}
	return s.inner.RoundTrip(r)
}

// A ping that fails on the transport is sent once more before the session
// is taken for closed: an HTTP ping that went out on a stale pooled
// connection keeps its session, state and generation.
func TestAPingLostWithAStaleConnectionKeepsItsSession(t *testing.T) {
	is := is.New(t)
	logs := fakes.CaptureLogs(t)
	server := fakes.NewServer()
	upstream := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(upstream.Close)
	stale := &staleOnce{inner: http.DefaultTransport}
	conn := config.Connection{Kind: "mcp", ID: connID, Transport: config.Transport{Kind: config.TransportHTTP, URL: upstream.URL}}
	opts, clock := clocked(session.Policy{MinBackoff: time.Second, MaxBackoff: time.Second, ProvedAfter: time.Minute, ProbeInterval: time.Minute})
	opts.KeepAlive, opts.PingTimeout, opts.NoListen = 10*time.Second, 2*time.Second, true
	h := spawnConnWithParent(t, conn, session.HTTP{Client: &http.Client{Transport: stale}}, opts)
	is.NoErr(await(t, sendAt(h.engine, h.pid, clock, "counter", nil, time.Minute)).Error.Err())
	h.waitState(t, session.StateConnecting)
	h.waitState(t, session.StateOpen)

	stale.armed.Store(true)
	nextPing(t, clock)
	awaitTimer(t, clock, 10*time.Second) // the second ping was answered: the next is armed
	is.True(!stale.armed.Load())         // the first ping did fail

	st := liveStatus(t, h.engine, h.pid)
	is.Equal(st.State, session.StateOpen) // the session is kept
	is.Equal(st.Generation, int64(1))
	is.Equal(len(logs.Lines("keepalive found the session closed")), 0)
	r := await(t, sendAt(h.engine, h.pid, clock, "counter", nil, time.Minute))
	is.NoErr(r.Error.Err())
	is.Equal(fakes.ToolOutput(t, r)["count"], float64(2)) // on the same upstream session
}
