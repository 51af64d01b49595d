package session_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes"
)

// A source whose endpoint redirects (307) to another origin still works,
// but the headers configured for it, and its URL (a Referer), reach only
// the configured origin.
func TestConfiguredHeadersDoNotFollowACrossOriginRedirect(t *testing.T) {
	is := is.New(t)
	var mu sync.Mutex
	var seen []http.Header
	server := fakes.NewServer()
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		mcpHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(elsewhere.Close)
	configured := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(configured.Close)

	const key, token = "k-3f9a1c77d2", "Bearer t-8e2b6d0a41"
	conn := config.Connection{Kind: "mcp", ID: connID, Transport: config.Transport{
		Kind: config.TransportHTTP, URL: configured.URL + "/mcp?api_key=q-5c1d9e",
		Headers: map[string]string{"X-Api-Key": key, "Authorization": token},
	}}
	e := newEngine(t)
	pid := e.Spawn(session.New(conn, session.HTTP{}, testOptions()), "session")
	t.Cleanup(func() { stop(t, e, pid) })

	is.Equal(mustCall(t, e, pid, "counter", nil)["count"], float64(1))
	mu.Lock()
	defer mu.Unlock()
	is.True(len(seen) > 0) // the calls went through the redirect
	for _, h := range seen {
		is.Equal(h.Get("X-Api-Key"), "")     // no configured header at the other origin
		is.Equal(h.Get("Authorization"), "") // nor the configured authorization
		is.Equal(h.Get("Referer"), "")       // nor the configured URL, query and all
	}
}
