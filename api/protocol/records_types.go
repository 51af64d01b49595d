package protocol

import "encoding/json"

// Plan is a compiled workflow plan ("raw plan") as the API carries it: the
// JSON the workflow language's encoder produced, passed through unread.
// The manifest types it as a JSON object; its shape is the plan document
// api/contract serves (`mcpflow schema plan`). docs/decisions.md says why
// the API keeps no type tree of its own for it. Decode it with the
// workflow package to read it.
type Plan = json.RawMessage

// CapabilityRef names a capability by logical source and local key.
type CapabilityRef struct {
	Source        string `json:"source"`
	CapabilityKey string `json:"capability_key"`
}

// RequiredCapability is one dependency an artifact was saved with.
type RequiredCapability struct {
	Ref                    CapabilityRef `json:"ref"`
	Kind                   string        `json:"kind"`
	InputSchemaHash        *string       `json:"input_schema_hash"`
	InputSchemaSnapshot    Object        `json:"input_schema_snapshot"`
	OutputSchemaHash       *string       `json:"output_schema_hash"`
	OutputSchemaSnapshot   Object        `json:"output_schema_snapshot"`
	ObservedConcreteSource *string       `json:"observed_concrete_source"`
	ObservedAtEpochMs      *int64        `json:"observed_at_epoch_ms"`
}

// Artifact is the manifest's WorkflowArtifactPayload: an immutable,
// versioned workflow.
type Artifact struct {
	ID                        string               `json:"id"`
	Version                   int                  `json:"version"`
	Title                     string               `json:"title"`
	Kind                      string               `json:"kind"` // workflow | wrapper
	Description               *string              `json:"description"`
	InputSchema               Object               `json:"input_schema"`
	OutputSchema              Object               `json:"output_schema"`
	Outcomes                  []string             `json:"outcomes"`
	Plan                      Plan                 `json:"plan"`
	RequiredCapabilities      []RequiredCapability `json:"required_capabilities"`
	WorkflowDependencies      map[string]int       `json:"workflow_dependencies"`
	CreatedFromCatalogVersion *string              `json:"created_from_catalog_version"`
}

// Deployment is the manifest's WorkflowDeploymentPayload: one artifact
// version bound to concrete sources.
type Deployment struct {
	ID              string    `json:"id"`
	ArtifactID      string    `json:"artifact_id"`
	ArtifactVersion int       `json:"artifact_version"`
	Bindings        []Binding `json:"bindings"`
	DriftPolicy     string    `json:"drift_policy"` // block | warn | allow
	// Limits, Retention and MCP are mcpflow extensions: the deployment's
	// run limits, how long its finished runs are kept, and how it is
	// offered to MCP clients.
	Limits    *RunLimits   `json:"limits,omitempty"`
	Retention *Retention   `json:"retention,omitempty"`
	MCP       *MCPExposure `json:"mcp,omitempty"`
}

// Binding maps a logical source of an artifact to a concrete connection;
// Session is which upstream session the runs use ("shared", the default,
// "deployment" or "run"); Task when the connection's tools are called as
// MCP tasks ("auto", the default, or "always"); OnSessionReplaced what a
// run does when that session is replaced between two of its calls
// ("continue", the default, or "fail").
type Binding struct {
	LogicalSource     string `json:"logical_source"`
	ConcreteSource    string `json:"concrete_source"`
	Session           string `json:"session,omitempty"`
	Task              string `json:"task,omitempty"`
	OnSessionReplaced string `json:"on_session_replaced,omitempty"`
}

// RunLimits bound each run of a deployment; nil fields keep the server's
// defaults.
type RunLimits struct {
	MaxSteps          *int `json:"max_steps,omitempty"`
	RunTimeoutSeconds *int `json:"run_timeout_seconds,omitempty"`
}

// Retention is how long a deployment's finished runs are kept; 0 keeps
// them for ever.
type Retention struct {
	FinishedSeconds *int64 `json:"finished_seconds,omitempty"`
}

// MCPExposure is how a deployment is offered as an MCP tool: under
// ToolName instead of the name derived from its id, or not at all.
type MCPExposure struct {
	ToolName string `json:"tool_name,omitempty"`
	Hidden   bool   `json:"hidden,omitempty"`
}
