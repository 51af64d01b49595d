package protocol

// MethodAccessWhoami (an extension) says who the caller is.
const MethodAccessWhoami = "workflow.access.whoami"

// WhoamiResult answers workflow.access.whoami: the caller's token name,
// its scopes, the deployments it sees as MCP tools (none: all) and the
// methods of the workflow API it may call, sorted.
type WhoamiResult struct {
	Name           string   `json:"name"`
	Anonymous      bool     `json:"anonymous"`
	Scopes         []string `json:"scopes"`
	MCPDeployments []string `json:"mcp_deployments"`
	Methods        []string `json:"methods"`
}
