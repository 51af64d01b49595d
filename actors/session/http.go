package session

import (
	"context"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
)

// HTTP reaches MCP servers over streamable HTTP, sending the connection's
// configured headers with every request, and its credentials, which win
// over a configured header of the same name.
type HTTP struct {
	// Client is the base HTTP client; nil uses http.DefaultClient's
	// transport.
	Client *http.Client
	// Credentials authorize the requests; nil sends none.
	Credentials Credentials
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
	if h.Credentials != nil {
		ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
		defer cancel()
		authorized, err := h.Credentials.HTTP(ctx, conn, base)
		if err != nil {
			return nil, err
		}
		base = authorized
	}
	// The configured headers are set first, the credentials after them.
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
