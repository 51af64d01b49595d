package session

import (
	"fmt"

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
