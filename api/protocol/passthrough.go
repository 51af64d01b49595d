package protocol

// MethodRunsPassthrough (an extension) calls one tool of a connection
// exposed through the MCP face (server.mcp.expose) as a one-step run of
// kind RunKindPassthrough: the MCP face's gateway mode.
const MethodRunsPassthrough = "workflow.runs.passthrough"

// RunKindPassthrough is the kind (an extension of RunResult and
// RunSummary) of a run that is a pass-through call of an upstream tool.
const RunKindPassthrough = "passthrough"

// PassthroughParams are the params of workflow.runs.passthrough.
type PassthroughParams struct {
	// Connection is the id of an exposed connection, Tool the upstream
	// name of one of its tools the expose entry offers.
	Connection string `json:"connection"`
	Tool       string `json:"tool"`
	// Arguments are the tool's arguments.
	Arguments Object `json:"arguments,omitempty"`
	// Wait and ClientSampling are as StartRunParams'.
	Wait           *bool `json:"wait,omitempty"`
	ClientSampling *bool `json:"client_sampling,omitempty"`
	// ClientSession (an extension) is the downstream MCP client session
	// the call comes from, for a connection exposed per_client: the calls
	// of one client session (of one token) share an upstream session of
	// their own.
	ClientSession *string `json:"client_session,omitempty"`
}

// MethodRunsPassthroughRelease (an extension) closes the upstream
// sessions of a downstream MCP client session on the connections exposed
// per_client: the MCP face calls it when that session ends.
const MethodRunsPassthroughRelease = "workflow.runs.passthrough_release"

// PassthroughReleaseParams are the params of
// workflow.runs.passthrough_release, and its result.
type PassthroughReleaseParams struct {
	ClientSession string `json:"client_session"`
}
