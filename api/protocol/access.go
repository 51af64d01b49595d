package protocol

// MethodAccessWhoami (an extension) says who the caller is.
const MethodAccessWhoami = "workflow.access.whoami"

// WhoamiResult answers workflow.access.whoami: the caller's token name,
// its scopes, the deployments and exposed connections it sees as MCP
// tools (none: all), the methods of the workflow API it may call, sorted,
// and the server's MCP face as it offers it to the caller.
type WhoamiResult struct {
	Name           string   `json:"name"`
	Anonymous      bool     `json:"anonymous"`
	Scopes         []string `json:"scopes"`
	MCPDeployments []string `json:"mcp_deployments"`
	MCPConnections []string `json:"mcp_connections"`
	Methods        []string `json:"methods"`
	// MCPFace is the server's server.mcp, for a face of its own
	// (`mcpflow mcp`) that offers what /mcp does; nil from a server that
	// does not say.
	MCPFace *MCPFace `json:"mcp_face,omitempty"`
}

// MCPFace is what the MCP face offers (server.mcp): how deployments
// become tools, whether authoring tools are offered, and the connections
// exposed (those the caller sees), each as server.mcp.expose has it.
type MCPFace struct {
	Tools       string   `json:"tools"`
	MaxTools    int      `json:"max_tools"`
	Deployments []string `json:"deployments"`
	Authoring   bool     `json:"authoring"`
	HeartbeatMS int      `json:"heartbeat_ms"`
	Expose      []Object `json:"expose"`
}
