package session

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
)

// TransportFactory makes MCP transports for one transport kind. It is the
// production seam through which the supervisor reaches upstream servers:
// stdio subprocesses, streamable HTTP endpoints, or (in tests) in-process
// servers.
type TransportFactory interface {
	// NewTransport returns a fresh, unconnected transport to conn's
	// server. The session actor calls Connect on it exactly once.
	NewTransport(conn config.Connection) (mcp.Transport, error)
}

// Credentials binds each connection's auth record to its transport
// (credentials.Binder implements it). The HTTP and Stdio factories ask it
// at every NewTransport, so a changed record takes effect on the
// connection's next session. Its errors name the auth record and its
// scheme, never a secret value.
type Credentials interface {
	// HTTP returns the round tripper that authorizes conn's requests over
	// base (base itself when conn has no auth record).
	HTTP(ctx context.Context, conn config.Connection, base http.RoundTripper) (http.RoundTripper, error)
	// Env returns the variables conn's auth record adds to a stdio
	// server's environment, winning over the transport's own.
	Env(ctx context.Context, conn config.Connection) (map[string]string, error)
}

// lookupTimeout bounds reading a connection's auth record.
const lookupTimeout = 10 * time.Second

// Killer is implemented by transports that can end their peer at once (a
// stdio subprocess group). The session actor uses it when a graceful close
// overruns its deadline.
type Killer interface {
	Kill() error
}

// Factories chooses a TransportFactory per transport kind ("stdio", "http").
type Factories map[string]TransportFactory

// NewTransport picks the factory for conn's transport kind.
func (f Factories) NewTransport(conn config.Connection) (mcp.Transport, error) {
	factory, ok := f[conn.Transport.Kind]
	if !ok {
		return nil, fmt.Errorf("connection %q: no transport factory for kind %q", conn.ID, conn.Transport.Kind)
	}
	return factory.NewTransport(conn)
}
