package session_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
)

// sessionCounter is a server whose count tool counts the calls of the
// server session that serves it: a session's state.
func sessionCounter() *mcp.Server {
	var mu sync.Mutex
	counts := map[*mcp.ServerSession]int{}
	s := mcp.NewServer(&mcp.Implementation{Name: "session-counter", Version: "v0"}, nil)
	type out struct {
		Count int `json:"count"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "count", Description: "Count the calls of this server session."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, out, error) {
			mu.Lock()
			defer mu.Unlock()
			counts[req.Session]++
			return nil, out{Count: counts[req.Session]}, nil
		})
	return s
}

// versionRecorder notes the Mcp-Protocol-Version headers of the requests
// that go through it, in order, and their Mcp-Session-Id values.
type versionRecorder struct {
	mu       sync.Mutex
	versions []string
	sessions map[string]bool
}

func (v *versionRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	v.mu.Lock()
	if h := r.Header.Get("Mcp-Protocol-Version"); h != "" {
		v.versions = append(v.versions, h)
	}
	if h := r.Header.Get("Mcp-Session-Id"); h != "" {
		v.sessions[h] = true
	}
	v.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// TestErasKeepOrDropServerSessionState calls a tool that counts per server
// session through a session actor, for each protocol_version setting
// against a stateful and a stateless streamable HTTP handler: the version
// the session speaks (a stateful server makes a 2026-07-28 client fall
// back) and whether the server kept one session across the calls.
func TestErasKeepOrDropServerSessionState(t *testing.T) {
	for _, tc := range []struct {
		name      string
		stateless bool
		version   string
		versions  []string // the Mcp-Protocol-Version headers sent, repeats removed
		counts    []float64
	}{
		{name: "stateful-2025-11-25", version: "2025-11-25", versions: []string{"2025-11-25"}, counts: []float64{1, 2, 3}},
		// server/discover asks for 2026-07-28, initialize falls back.
		{name: "stateful-2026-07-28", version: "2026-07-28", versions: []string{"2026-07-28", "2025-11-25"}, counts: []float64{1, 2, 3}},
		{name: "stateless-2025-11-25", stateless: true, version: "2025-11-25", versions: []string{"2025-11-25"}, counts: []float64{1, 1, 1}},
		{name: "stateless-2026-07-28", stateless: true, version: "2026-07-28", versions: []string{"2026-07-28"}, counts: []float64{1, 1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			server := sessionCounter()
			upstream := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
				&mcp.StreamableHTTPOptions{Stateless: tc.stateless}))
			t.Cleanup(upstream.Close)
			rec := &versionRecorder{sessions: map[string]bool{}}
			conn := config.Connection{Kind: "mcp", ID: connID, Transport: config.Transport{Kind: config.TransportHTTP, URL: upstream.URL, ProtocolVersion: tc.version}}
			e := newEngine(t)
			pid := e.Spawn(session.New(conn, session.HTTP{Client: &http.Client{Transport: rec}}, testOptions()), "session")
			t.Cleanup(func() { stop(t, e, pid) })

			var counts []float64
			for range tc.counts {
				count, _ := mustCall(t, e, pid, "count", nil)["count"].(float64)
				counts = append(counts, count)
			}
			is.Equal(counts, tc.counts) // the server session's state across calls
			rec.mu.Lock()
			defer rec.mu.Unlock()
			is.Equal(slices.Compact(rec.versions), tc.versions) // the versions the requests named
			wantSessions := 1                                   // one Mcp-Session-Id for every request
			if tc.stateless {
				wantSessions = 0 // no server session
			}
			is.Equal(len(rec.sessions), wantSessions) // the server sessions the requests named
		})
	}
}
