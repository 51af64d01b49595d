// Package catalog owns what a source offers: catalog snapshots of MCP
// connections (tools, resources, prompts), the built-in platform
// capabilities, and the conversion of both into workflow capabilities named
// "<source_id>.<local_name>". It is pure data; the session actor fills it.
package catalog

// Object is a JSON object.
type Object = map[string]any

// DefaultMaxAgeSeconds is how long a snapshot is considered fresh.
const DefaultMaxAgeSeconds = 300

// Snapshot is what one MCP connection offered when it was last listed.
type Snapshot struct {
	ConnectionID     string     `json:"connection_id"`
	FetchedAtEpochMs int64      `json:"fetched_at_epoch_ms"`
	MaxAgeSeconds    int        `json:"max_age_seconds"`
	Tools            []Tool     `json:"tools"`
	Resources        []Resource `json:"resources"`
	Prompts          []Prompt   `json:"prompts"`
	// ResourceTemplates are the server's resource templates (none
	// before they were listed).
	ResourceTemplates []ResourceTemplate `json:"resource_templates,omitempty"`
}

// Tool is one upstream MCP tool.
type Tool struct {
	Name         string `json:"name"`
	Title        string `json:"title,omitempty"`
	Description  string `json:"description,omitempty"`
	InputSchema  Object `json:"input_schema"`
	OutputSchema Object `json:"output_schema,omitempty"`
	// ReadOnly and Idempotent are the tool's readOnlyHint and
	// idempotentHint annotations: a call of such a tool is safe to repeat.
	ReadOnly   bool `json:"read_only_hint,omitempty"`
	Idempotent bool `json:"idempotent_hint,omitempty"`
	// Destructive and OpenWorld are its destructiveHint and openWorldHint,
	// nil when the tool does not say (MCP then assumes true).
	Destructive *bool `json:"destructive_hint,omitempty"`
	OpenWorld   *bool `json:"open_world_hint,omitempty"`
	// TaskSupport is the tool's execution.taskSupport (MCP tasks):
	// TaskForbidden ("" too, when the tool does not say), TaskOptional or
	// TaskRequired.
	TaskSupport string `json:"task_support,omitempty"`
}

// The values of a tool's execution.taskSupport.
const (
	TaskForbidden = "forbidden"
	TaskOptional  = "optional"
	TaskRequired  = "required"
)

// Resource is one upstream MCP resource.
type Resource struct {
	URI         string `json:"uri"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mime_type,omitempty"`
}

// ResourceTemplate is one upstream MCP resource template: the resources
// whose URIs match URITemplate (RFC 6570).
type ResourceTemplate struct {
	URITemplate string `json:"uri_template"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mime_type,omitempty"`
}

// Prompt is one upstream MCP prompt.
type Prompt struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Arguments are the prompt's arguments (none before they were
	// listed).
	Arguments []PromptArgument `json:"arguments,omitempty"`
}

// PromptArgument is one argument of an upstream prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}
