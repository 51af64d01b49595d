package protocol

// The prompts of a connection exposed through the MCP face with
// "prompts": true (server.mcp.expose): the face lists them and renders
// them through these methods (extensions).
const (
	// MethodSourcesPrompts lists the prompts an exposed connection's
	// catalog holds.
	MethodSourcesPrompts = "workflow.sources.prompts"
	// MethodSourcesGetPrompt renders one prompt of an exposed connection
	// through its shared session.
	MethodSourcesGetPrompt = "workflow.sources.get_prompt"
)

// SourcePromptsParams are the params of workflow.sources.prompts.
type SourcePromptsParams struct {
	SourceID string `json:"source_id"`
}

// SourcePromptsResult is the result of workflow.sources.prompts: the
// prompts of the connection's catalog, in the order the upstream listed
// them.
type SourcePromptsResult struct {
	Prompts []SourcePrompt `json:"prompts"`
}

// SourcePrompt is one upstream prompt as the connection's catalog holds
// it.
type SourcePrompt struct {
	Name        string                 `json:"name"`
	Title       *string                `json:"title,omitempty"`
	Description *string                `json:"description,omitempty"`
	Arguments   []SourcePromptArgument `json:"arguments"`
}

// SourcePromptArgument is one argument of an upstream prompt.
type SourcePromptArgument struct {
	Name        string  `json:"name"`
	Title       *string `json:"title,omitempty"`
	Description *string `json:"description,omitempty"`
	Required    bool    `json:"required"`
}

// GetSourcePromptParams are the params of workflow.sources.get_prompt.
type GetSourcePromptParams struct {
	SourceID  string            `json:"source_id"`
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
}

// GetSourcePromptResult is the upstream's GetPromptResult: its
// description and messages, each as MCP has it (role, content).
type GetSourcePromptResult struct {
	Description *string  `json:"description,omitempty"`
	Messages    []Object `json:"messages"`
}
