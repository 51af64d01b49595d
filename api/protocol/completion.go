package protocol

// MethodSourcesComplete completes one argument of a prompt or a resource
// template of a connection exposed through the MCP face
// (server.mcp.expose) through its shared session: the face forwards
// completion/complete with it (an extension).
const MethodSourcesComplete = "workflow.sources.complete"

// Completion reference types: what the argument completed belongs to.
const (
	CompletionRefPrompt   = "ref/prompt"
	CompletionRefResource = "ref/resource"
)

// CompleteSourceParams are the params of workflow.sources.complete.
type CompleteSourceParams struct {
	SourceID string `json:"source_id"`
	// Ref is the prompt or resource template the argument belongs to, as
	// the upstream names it.
	Ref CompletionRef `json:"ref"`
	// Argument is the argument and what was typed of it so far.
	Argument CompletionArgument `json:"argument"`
	// Arguments are the other arguments resolved already (MCP's
	// context.arguments).
	Arguments map[string]string `json:"arguments,omitempty"`
}

// CompletionRef names a prompt (Type CompletionRefPrompt, Name) or a
// resource template (Type CompletionRefResource, URI its URI template).
type CompletionRef struct {
	Type string  `json:"type"`
	Name *string `json:"name,omitempty"`
	URI  *string `json:"uri,omitempty"`
}

// CompletionArgument is the argument completed: its name and its value
// so far.
type CompletionArgument struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CompleteSourceResult is the upstream's completion: its values (none
// where the upstream does not complete), the total it knows of, and
// whether there are more than it gave.
type CompleteSourceResult struct {
	Values  []string `json:"values"`
	Total   *int     `json:"total,omitempty"`
	HasMore bool     `json:"has_more"`
}
