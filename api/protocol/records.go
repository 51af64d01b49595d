package protocol

// Method names: saving and deleting records, calling a capability
// directly, the source inventory and the admin event log.
const (
	MethodArtifactsSave     = "workflow.artifacts.save"
	MethodArtifactsDelete   = "workflow.artifacts.delete"
	MethodDeploymentsDelete = "workflow.deployments.delete"
	MethodCapabilitiesCall  = "workflow.capabilities.call"
	MethodSourcesList       = "workflow.sources.list"
	MethodSourcesInspect    = "workflow.sources.inspect"
	MethodSourcesDiagnose   = "workflow.sources.diagnose"
	MethodAdminEventsList   = "workflow.admin.events.list"
)

// SaveArtifactParams are the params of workflow.artifacts.save: a whole
// artifact, in the form workflow.artifacts.inspect answers (required
// capabilities may also be a map keyed by "<source>.<capability_key>").
type SaveArtifactParams struct {
	Artifact Object `json:"artifact"`
}

// DeleteArtifactResult is the manifest's DeleteArtifactResult. Deleted is
// false, and BlockedByDeployments names the deployments, while a
// deployment uses that version.
type DeleteArtifactResult struct {
	ArtifactID           string   `json:"artifact_id"`
	Version              int      `json:"version"`
	Deleted              bool     `json:"deleted"`
	BlockedByDeployments []string `json:"blocked_by_deployments"`
}

// DeleteDeploymentResult is the manifest's DeleteDeploymentResult.
type DeleteDeploymentResult struct {
	DeploymentID string `json:"deployment_id"`
	Deleted      bool   `json:"deleted"`
}

// CallCapabilityParams are the params of workflow.capabilities.call.
type CallCapabilityParams struct {
	QualifiedName string  `json:"qualified_name"`
	Payload       Object  `json:"payload,omitempty"`
	DeploymentID  *string `json:"deployment_id,omitempty"`
}

// Capability kinds of a CapabilityCallResult.
const (
	CapabilityKindNodeSpec = "node_spec"
	CapabilityKindWrapper  = "wrapper_artifact"
)

// CapabilityCallResult is the manifest's CapabilityCallResult. A call
// that failed is still a result: outcome "runtime_error", a null output
// and a capability_call_failed diagnostic.
type CapabilityCallResult struct {
	QualifiedName string           `json:"qualified_name"`
	SourceID      string           `json:"source_id"`
	Kind          string           `json:"kind"` // node_spec | wrapper_artifact
	DeploymentID  *string          `json:"deployment_id"`
	Outcome       string           `json:"outcome"`
	Output        Object           `json:"output"` // null when the call failed
	Diagnostics   []DependencyDiag `json:"diagnostics"`
}

// ListSourcesParams are the params of workflow.sources.list.
type ListSourcesParams struct {
	Cursor *string `json:"cursor,omitempty"`
	Limit  *int    `json:"limit,omitempty"`
}

// InspectSourceParams name one source (workflow.sources.inspect and
// workflow.sources.diagnose).
type InspectSourceParams struct {
	SourceID string `json:"source_id"`
}

// SourceVisibility says who sees a source.
type SourceVisibility struct {
	Planner        bool `json:"planner"`
	Client         bool `json:"client"`
	AdminDashboard bool `json:"admin_dashboard"`
}

// SourcePermissions are a source's permission flags.
type SourcePermissions struct {
	SafeForWorkflow bool `json:"safe_for_workflow"`
	CallsUpstream   bool `json:"calls_upstream"`
	MutatesConfig   bool `json:"mutates_config"`
	MutatesAuth     bool `json:"mutates_auth"`
}

// SourcePolicy says how deployments bind a source: a platform source needs
// no binding, any other one must be bound.
type SourcePolicy struct {
	Platform        bool `json:"platform"`
	BindingRequired bool `json:"binding_required"`
}

// SourceCapabilityPreview is up to three sorted names per bucket.
type SourceCapabilityPreview struct {
	Tools     []string `json:"tools"`
	NodeSpecs []string `json:"node_specs"`
	Reducers  []string `json:"reducers"`
	Prompts   []string `json:"prompts"`
	Resources []string `json:"resources"`
}

// SourceCapabilityHasMore says which previews left names out.
type SourceCapabilityHasMore struct {
	Tools     bool `json:"tools"`
	NodeSpecs bool `json:"node_specs"`
	Reducers  bool `json:"reducers"`
	Prompts   bool `json:"prompts"`
	Resources bool `json:"resources"`
}

// SourceStatus is the manifest's SourceStatusPayload: one row of
// workflow.sources.list.
type SourceStatus struct {
	ID            string                  `json:"id"`
	Kind          string                  `json:"kind"` // system | connection | python
	Enabled       bool                    `json:"enabled"`
	Visibility    SourceVisibility        `json:"visibility"`
	Permissions   SourcePermissions       `json:"permissions"`
	Policy        SourcePolicy            `json:"policy"`
	Description   *string                 `json:"description"`
	ToolCount     int                     `json:"tool_count"`
	NodeSpecCount int                     `json:"node_spec_count"`
	ReducerCount  int                     `json:"reducer_count"`
	PromptCount   int                     `json:"prompt_count"`
	ResourceCount int                     `json:"resource_count"`
	Preview       SourceCapabilityPreview `json:"preview"`
	HasMore       SourceCapabilityHasMore `json:"has_more"`
}

// ListSourcesResult answers workflow.sources.list.
type ListSourcesResult struct {
	Sources    []SourceStatus `json:"sources"`
	NextCursor *string        `json:"next_cursor"`
	Total      int            `json:"total"`
}

// NodeSpecInventory is the contract of one node spec a source owns.
type NodeSpecInventory struct {
	Name           string   `json:"name"`
	Description    *string  `json:"description"`
	Outcomes       []string `json:"outcomes"`
	InputSchema    Object   `json:"input_schema"`
	OutputSchema   Object   `json:"output_schema"`
	IsAsync        bool     `json:"is_async"`
	AcceptsContext bool     `json:"accepts_context"`
}

// ReducerInventory is the contract of one reducer a source owns.
type ReducerInventory struct {
	Name         string        `json:"name"`
	Ref          CapabilityRef `json:"ref"`
	Description  *string       `json:"description"`
	ConfigSchema Object        `json:"config_schema"`
}

// SourceCapabilityInventory is every name a source owns, by bucket, with
// the contracts of its node specs and reducers.
type SourceCapabilityInventory struct {
	Tools           []string            `json:"tools"`
	NodeSpecs       []string            `json:"node_specs"`
	NodeSpecDetails []NodeSpecInventory `json:"node_spec_details"`
	Reducers        []string            `json:"reducers"`
	ReducerDetails  []ReducerInventory  `json:"reducer_details"`
	Prompts         []string            `json:"prompts"`
	Resources       []string            `json:"resources"`
}

// InspectSourceResult answers workflow.sources.inspect: the source's
// status row, its whole inventory and its diagnosis.
type InspectSourceResult struct {
	SourceStatus
	Capabilities SourceCapabilityInventory `json:"capabilities"`
	Diagnostics  *SourceDiagnosis          `json:"diagnostics,omitempty"`
	// ConnectionLogs are a connection's own log messages, newest last (an
	// extension; see SessionStatus.Logs).
	ConnectionLogs []ConnectionLog `json:"connection_logs,omitempty"`
}

// SourceDiagnosis is the manifest's SourceDiagnosisResult: status "ok" or
// "error" (any diagnostic), with the transport, auth and catalog facts of
// a connection. A platform source has none of these and says so in
// Message.
type SourceDiagnosis struct {
	SourceID    string                    `json:"source_id"`
	Status      string                    `json:"status"`
	Enabled     *bool                     `json:"enabled,omitempty"`
	Transport   *SourceTransportDiagnosis `json:"transport,omitempty"`
	Auth        *SourceAuthDiagnosis      `json:"auth,omitempty"`
	Catalog     *SourceCatalogDiagnosis   `json:"catalog,omitempty"`
	Diagnostics []DependencyDiag          `json:"diagnostics"`
	Message     *string                   `json:"message,omitempty"`
	// Session (an mcpflow extension) is the live state of the source's
	// shared upstream session and its last failure.
	Session *SourceSessionDiagnosis `json:"session,omitempty"`
}

// SourceSessionDiagnosis is a source's live session as a diagnosis shows
// it: its state, whether it fails now, the cause of its last failure in a
// user's words and as the transport said it (redacted).
type SourceSessionDiagnosis struct {
	State              string  `json:"state"`
	Failing            bool    `json:"failing"`
	Cause              *string `json:"cause,omitempty"`
	LastError          *string `json:"last_error,omitempty"`
	LastErrorAtEpochMs *int64  `json:"last_error_at_epoch_ms,omitempty"`
}

// SourceTransportDiagnosis says how a source is reached: the transport
// kind only, never its command, URL, headers or environment.
type SourceTransportDiagnosis struct {
	Kind       *string `json:"kind"`
	Configured bool    `json:"configured"`
}

// SourceAuthDiagnosis says which auth record a source uses and whether it
// fits the transport; never the record's payload.
type SourceAuthDiagnosis struct {
	AuthRef            *string `json:"auth_ref"`
	RecordPresent      *bool   `json:"record_present"`
	Scheme             *string `json:"scheme"`
	TransportSupported bool    `json:"transport_supported"`
}

// SourceCatalogDiagnosis describes a source's last catalog snapshot.
type SourceCatalogDiagnosis struct {
	HasSnapshot      bool   `json:"has_snapshot"`
	FetchedAtEpochMs *int64 `json:"fetched_at_epoch_ms"`
	MaxAgeSeconds    *int   `json:"max_age_seconds"`
	NodeCount        int    `json:"node_count"`
	ResourceCount    int    `json:"resource_count"`
	PromptCount      int    `json:"prompt_count"`
}

// AdminEvent is the manifest's AdminEventPayload: one entry of the admin
// event log. Every event has its timestamp.
type AdminEvent struct {
	Kind             string  `json:"kind"`
	TimestampEpochMs int64   `json:"timestamp_epoch_ms"`
	ConnectionID     *string `json:"connection_id"`
	CapabilityID     *string `json:"capability_id"`
	WorkflowName     *string `json:"workflow_name"`
	Payload          Object  `json:"payload"`
}

// ListAdminEventsResult answers workflow.admin.events.list: the kept
// events, oldest first.
type ListAdminEventsResult struct {
	Events []AdminEvent `json:"events"`
	Total  int          `json:"total"`
}
