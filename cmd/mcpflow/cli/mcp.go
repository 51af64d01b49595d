package cli

import "github.com/spf13/cobra"

// newMCPCommand holds `mcp config`, the snippets that add mcpflow to an
// MCP host.
func newMCPCommand(r *remote) *cobra.Command {
	return newGroup("mcp", "Add mcpflow to MCP hosts", newMCPConfigCommand(r))
}
