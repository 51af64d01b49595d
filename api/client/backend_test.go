package client_test

import (
	"github.com/mcpflow/mcpflow/api/client"
	"github.com/mcpflow/mcpflow/api/mcpface"
)

// The Go client is a Backend of the MCP face, for `mcpflow mcp`; the
// client does not import the face, so the check lives here.
var _ mcpface.Backend = (*client.Client)(nil)
