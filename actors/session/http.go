package session

import (
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
)

// HTTP reaches MCP servers over streamable HTTP, sending the connection's
// configured headers with every request.
type HTTP struct {
	// Client is the base HTTP client; nil uses http.DefaultClient's
	// transport.
	Client *http.Client
}

// NewTransport returns a streamable HTTP client transport for conn.
func (h HTTP) NewTransport(conn config.Connection) (mcp.Transport, error) {
	if conn.Transport.URL == "" {
		return nil, fmt.Errorf("connection %q: http transport needs a url", conn.ID)
	}
	base := http.DefaultTransport
	if h.Client != nil && h.Client.Transport != nil {
		base = h.Client.Transport
	}
	client := &http.Client{Transport: headerTransport{base: base, headers: conn.Transport.Headers}}
	return &mcp.StreamableClientTransport{Endpoint: conn.Transport.URL, HTTPClient: client}, nil
}

// headerTransport adds fixed headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	return t.base.RoundTrip(r)
}
