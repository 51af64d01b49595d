package mcpface

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/api/protocol"
)

// The authoring tools, offered where server.mcp.authoring is on, each to
// the tokens that may call its method: with them an agent builds the workflow it
// then calls. Each is one workflow API method, its arguments that
// method's params, checked by the contract as on /ws.
const (
	toolSearchCapabilities = "mcpflow_search_capabilities"
	toolInspectCapability  = "mcpflow_inspect_capability"
	toolCreateDraft        = "mcpflow_create_draft"
	toolValidateDraft      = "mcpflow_validate_draft"
	toolSaveArtifact       = "mcpflow_save_artifact"
	toolDeploy             = "mcpflow_deploy"
)

// authoringTool describes one authoring tool: the method it calls and the
// properties of its params.
type authoringTool struct {
	name, title, description, method string
	props                            map[string]any
	required                         []string
	readOnly                         bool
}

var str = map[string]any{"type": "string"}

var authoring = []authoringTool{
	{name: toolSearchCapabilities, title: "Search capabilities", method: protocol.MethodCapabilitiesList, readOnly: true,
		description: "Lists the capabilities (upstream MCP tools and built-ins) a workflow step may call, filtered by query and source_id.",
		props:       map[string]any{"query": str, "source_id": str, "limit": map[string]any{"type": "integer", "minimum": 1}}},
	{name: toolInspectCapability, title: "Inspect a capability", method: protocol.MethodCapabilitiesInspect, readOnly: true,
		description: "Shows one capability's contract: input and output schemas, outcomes and the hints for wrapping it in a workflow.",
		props:       map[string]any{"qualified_name": str}, required: []string{"qualified_name"}},
	{name: toolCreateDraft, title: "Create a draft from a capability", method: protocol.MethodWorkspaceFromCapability,
		description: "Creates a draft workspace whose workflow calls one capability; its diagnostics say what is left to decide.",
		props:       map[string]any{"workspace_id": str, "capability_name": str, "name": str, "title": str}, required: []string{"workspace_id", "capability_name"}},
	{name: toolValidateDraft, title: "Validate a draft", method: protocol.MethodWorkspaceValidate, readOnly: true,
		description: "Validates a draft workspace: its status and diagnostics, each with a repair hint.",
		props:       map[string]any{"workspace_id": str}, required: []string{"workspace_id"}},
	{name: toolSaveArtifact, title: "Save a draft as an artifact", method: protocol.MethodWorkspaceCreateArtifact,
		description: "Saves a valid draft workspace as an immutable artifact version.",
		props: map[string]any{"workspace_id": str, "artifact_id": str, "version": map[string]any{"type": "integer", "minimum": 1},
			"title": str, "outcomes": map[string]any{"type": "array", "items": str}, "description": str},
		required: []string{"workspace_id", "artifact_id", "version", "title", "outcomes"}},
	{name: toolDeploy, title: "Deploy an artifact", method: protocol.MethodDeploymentsSave,
		description: "Saves a deployment: an artifact version bound to concrete sources ({id, artifact_id, artifact_version, bindings}). Its tool appears at once.",
		props:       map[string]any{"deployment": map[string]any{"type": "object"}}, required: []string{"deployment"}},
}

// authoringTools are the authoring tools as companions, each calling its
// one method.
func (f *Face) authoringTools(s *served) []companion {
	out := make([]companion, 0, len(authoring))
	for _, a := range authoring {
		no, destructive := false, !a.readOnly
		schema := map[string]any{"type": "object", "properties": a.props}
		if len(a.required) > 0 {
			schema["required"] = anys(a.required)
		}
		out = append(out, companion{authoring: true, toolEntry: toolEntry{
			tool: &mcp.Tool{Name: a.name, Title: a.title, Description: a.description, InputSchema: schema,
				Annotations: &mcp.ToolAnnotations{ReadOnlyHint: a.readOnly, IdempotentHint: a.readOnly, DestructiveHint: &destructive, OpenWorldHint: &no}},
			handler: f.callMethod(s, a.method), methods: []string{a.method},
		}})
	}
	return out
}

// callMethod is a tool that calls method with the tool's arguments as its
// params, and answers with its result.
func (f *Face) callMethod(s *served, method string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var params json.RawMessage
		if bad := decodeArgs(req, &params); bad != nil {
			return bad, nil
		}
		var res json.RawMessage
		if err := s.api.Call(ctx, method, params, &res); err != nil {
			return refusedOrError(err)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{textBlock(readableRaw(res))}, StructuredContent: res}, nil
	}
}
