// Package mcpface owns mcpflow's MCP server face: every deployment offered
// to MCP clients as a tool, a tool call as a durable run (progress,
// cancellation, interrupts as elicitation in both protocol eras), and the
// companion tools that inspect, resume and cancel runs and author
// workflows.
//
// It is a second face on the edge's method table, not a second copy of
// its rules: everything it does is a workflow API call made through a
// [Backend], in process through the edge (scopes, params checks, bounds
// and error mapping as on /ws) or, for `mcpflow mcp`, through the Go
// client to a running server. It speaks MCP only through go-sdk.
package mcpface
