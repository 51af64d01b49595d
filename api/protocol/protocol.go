// Package protocol owns the typed params and results of mcpflow's JSON-RPC
// methods: the Go form of the workflow API manifest's shapes, shared by the
// server's handlers and the Go client. Field names and JSON tags are the
// contract; do not rename them.
package protocol

import "encoding/json"

// Object is a JSON object.
type Object = map[string]any

// Method names.
const (
	MethodHealth                    = "workflow.health"
	MethodCapabilitiesList          = "workflow.capabilities.list"
	MethodCapabilitiesInspect       = "workflow.capabilities.inspect"
	MethodWorkspaceFromCapability   = "workflow.draft_workspaces.create_from_capability"
	MethodWorkspaceGet              = "workflow.draft_workspaces.get"
	MethodWorkspaceCreateArtifact   = "workflow.draft_workspaces.create_artifact"
	MethodArtifactsList             = "workflow.artifacts.list"
	MethodArtifactsInspect          = "workflow.artifacts.inspect"
	MethodDeploymentsSave           = "workflow.deployments.save"
	MethodDeploymentsInspect        = "workflow.deployments.inspect"
	MethodDeploymentsList           = "workflow.deployments.list"
	MethodDeploymentsValidate       = "workflow.deployments.validate"
	MethodRunsStart                 = "workflow.runs.start"
	MethodRunsInspect               = "workflow.runs.inspect"
	MethodRunsList                  = "workflow.runs.list"
	MethodConnectionsList           = "workflow.admin.connections.list"
	MethodConnectionStatusesList    = "workflow.admin.connection_statuses.list"
	MethodConnectionsRefreshCatalog = "workflow.admin.connections.refresh_catalog"
)

// Empty is the params of a method that takes none.
type Empty struct{}

// HealthResult answers workflow.health.
type HealthResult struct {
	Status    string `json:"status"`
	StoreRoot string `json:"store_root"`
	// Sources (an mcpflow extension) says whether every enabled
	// connection's session works: status stays "ok" while the server
	// answers, and Sources.Status is "degraded" while one of them fails.
	Sources *HealthSources `json:"sources,omitempty"`
}

// HealthSources is the health of the connections' sessions (an mcpflow
// extension of workflow.health): Status is "ok", or "degraded" while
// Failing of the Total enabled connections do not work now; Detail names
// each failing one, its session state and the cause in a user's words.
type HealthSources struct {
	Status  string         `json:"status"`
	Total   int            `json:"total"`
	Failing int            `json:"failing"`
	Detail  []SourceHealth `json:"detail"`
}

// SourceHealth is one failing connection of HealthSources.
type SourceHealth struct {
	SourceID string `json:"source_id"`
	State    string `json:"state"`
	Cause    string `json:"cause,omitempty"`
}

// ListCapabilitiesParams are the params of workflow.capabilities.list.
type ListCapabilitiesParams struct {
	Query    *string `json:"query,omitempty"`
	SourceID *string `json:"source_id,omitempty"`
	Cursor   *string `json:"cursor,omitempty"`
	Limit    *int    `json:"limit,omitempty"`
}

// CapabilitySummary is one row of workflow.capabilities.list.
type CapabilitySummary struct {
	Name         string   `json:"name"`
	SourceID     string   `json:"source_id"`
	Description  *string  `json:"description"`
	Outcomes     []string `json:"outcomes"`
	IsAsync      bool     `json:"is_async"`
	InputFields  []string `json:"input_fields"`
	OutputFields []string `json:"output_fields"`
	Kind         string   `json:"kind"`
}

// ListCapabilitiesResult answers workflow.capabilities.list.
type ListCapabilitiesResult struct {
	Capabilities []CapabilitySummary `json:"capabilities"`
	NextCursor   *string             `json:"next_cursor"`
	Total        int                 `json:"total"`
}

// InspectCapabilityParams are the params of workflow.capabilities.inspect.
type InspectCapabilityParams struct {
	QualifiedName string `json:"qualified_name"`
}

// CapabilityDetail answers workflow.capabilities.inspect.
type CapabilityDetail struct {
	Name           string   `json:"name"`
	SourceID       string   `json:"source_id"`
	Description    *string  `json:"description"`
	Outcomes       []string `json:"outcomes"`
	InputSchema    Object   `json:"input_schema"`
	OutputSchema   Object   `json:"output_schema"`
	IsAsync        bool     `json:"is_async"`
	AcceptsContext bool     `json:"accepts_context"`
	Kind           string   `json:"kind"`
	WrapperHints   Hints    `json:"wrapper_hints"`
	// Annotations (an extension) are what the capability's tool says of
	// its effects, MCP's defaults filled in.
	Annotations *ToolHints `json:"annotations,omitempty"`
}

// ToolHints are a capability's annotations: MCP's tool annotations with
// its defaults filled in.
type ToolHints struct {
	ReadOnly    bool `json:"read_only_hint"`
	Idempotent  bool `json:"idempotent_hint"`
	Destructive bool `json:"destructive_hint"`
	OpenWorld   bool `json:"open_world_hint"`
}

// CreateFromCapabilityParams are the params of
// workflow.draft_workspaces.create_from_capability.
type CreateFromCapabilityParams struct {
	WorkspaceID        string            `json:"workspace_id"`
	CapabilityName     string            `json:"capability_name"`
	Name               *string           `json:"name,omitempty"`
	Title              *string           `json:"title,omitempty"`
	InputSchema        Object            `json:"input_schema,omitempty"`
	StateSchema        Object            `json:"state_schema,omitempty"`
	OutputSchema       Object            `json:"output_schema,omitempty"`
	Input              []InputBinding    `json:"input,omitempty"`
	Output             []OutputBinding   `json:"output,omitempty"`
	InputMap           map[string]string `json:"input_map,omitempty"`
	OutputMap          map[string]string `json:"output_map,omitempty"`
	ErrorMessageSource any               `json:"error_message_source,omitempty"`
}

// WorkspaceSummary is the compact graph facts of a workspace.
type WorkspaceSummary struct {
	Name       any      `json:"name"`
	Start      any      `json:"start"`
	StepCount  int      `json:"step_count"`
	RouteCount int      `json:"route_count"`
	Steps      []string `json:"steps"`
}

// WorkspaceResult is the manifest's DraftWorkspaceResult.
type WorkspaceResult struct {
	WorkspaceID string           `json:"workspace_id"`
	Revision    int              `json:"revision"`
	Title       *string          `json:"title"`
	Status      string           `json:"status"`
	Diagnostics []Diagnostic     `json:"diagnostics"`
	Summary     WorkspaceSummary `json:"summary"`
	Draft       Object           `json:"draft,omitempty"`
}

// CreateFromCapabilityResult answers create_from_capability.
type CreateFromCapabilityResult struct {
	WorkspaceResult
	WrapperHints Hints       `json:"wrapper_hints"`
	NextActions  NextActions `json:"next_actions"`
}

// GetWorkspaceParams are the params of workflow.draft_workspaces.get.
type GetWorkspaceParams struct {
	WorkspaceID  string `json:"workspace_id"`
	IncludeDraft bool   `json:"include_draft,omitempty"`
}

// CreateArtifactParams are the params of
// workflow.draft_workspaces.create_artifact.
type CreateArtifactParams struct {
	WorkspaceID               string            `json:"workspace_id"`
	ArtifactID                string            `json:"artifact_id"`
	Version                   int               `json:"version"`
	Title                     string            `json:"title"`
	Outcomes                  []string          `json:"outcomes"`
	Kind                      *string           `json:"kind,omitempty"`
	Description               *string           `json:"description,omitempty"`
	RequiredCapabilities      map[string]Object `json:"required_capabilities,omitempty"`
	SourceBindings            map[string]string `json:"source_bindings,omitempty"`
	CreatedFromCatalogVersion *string           `json:"created_from_catalog_version,omitempty"`
}

// SavedArtifact answers create_artifact when the artifact was saved.
type SavedArtifact struct {
	ArtifactID             string            `json:"artifact_id"`
	Version                int               `json:"version"`
	Saved                  bool              `json:"saved"`
	RequiredLogicalSources []string          `json:"required_logical_sources"`
	SuggestedBindings      map[string]string `json:"suggested_bindings"`
}

// UnsavedArtifact answers create_artifact when the workspace is invalid.
type UnsavedArtifact struct {
	Saved       bool         `json:"saved"`
	WorkspaceID string       `json:"workspace_id"`
	Revision    int          `json:"revision"`
	Status      string       `json:"status"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

// CreateArtifactResult decodes either answer of create_artifact.
type CreateArtifactResult struct {
	SavedArtifact
	WorkspaceID string       `json:"workspace_id,omitempty"`
	Revision    int          `json:"revision,omitempty"`
	Status      string       `json:"status,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
}

// ListArtifactsParams are the params of workflow.artifacts.list.
type ListArtifactsParams struct {
	Query  *string `json:"query,omitempty"`
	Kind   *string `json:"kind,omitempty"`
	Cursor *string `json:"cursor,omitempty"`
	Limit  *int    `json:"limit,omitempty"`
}

// ArtifactEntry is one row of workflow.artifacts.list.
type ArtifactEntry struct {
	Name            string           `json:"name"`
	ArtifactID      string           `json:"artifact_id"`
	Version         int              `json:"version"`
	Kind            string           `json:"kind"`
	DisplayName     string           `json:"display_name"`
	Description     *string          `json:"description"`
	Outcomes        []string         `json:"outcomes"`
	InputSchema     Object           `json:"input_schema"`
	OutputSchema    Object           `json:"output_schema"`
	RequiredSources []string         `json:"required_sources"`
	Diagnostics     []DependencyDiag `json:"diagnostics"`
}

// ListArtifactsResult answers workflow.artifacts.list.
type ListArtifactsResult struct {
	Nodes      []ArtifactEntry `json:"nodes"`
	NextCursor *string         `json:"next_cursor"`
	Total      int             `json:"total"`
}

// InspectArtifactParams are the params of workflow.artifacts.inspect.
type InspectArtifactParams struct {
	ArtifactID string `json:"artifact_id"`
	Version    int    `json:"version"`
}

// SaveDeploymentParams are the params of workflow.deployments.save.
type SaveDeploymentParams struct {
	Deployment Object `json:"deployment"`
	// DryRun (an mcpflow extension) saves nothing and answers what the
	// save would change (SaveDeploymentResult.Change): for a console to
	// ask before it re-points a deployment.
	DryRun bool `json:"dry_run,omitempty"`
}

// SaveDeploymentResult answers workflow.deployments.save.
type SaveDeploymentResult struct {
	DeploymentID    string `json:"deployment_id"`
	ArtifactID      string `json:"artifact_id"`
	ArtifactVersion int    `json:"artifact_version"`
	Saved           bool   `json:"saved"`
	// Change (an mcpflow extension) answers a dry run: what the save
	// would change.
	Change *DeploymentChange `json:"change,omitempty"`
}

// DeploymentChange is what saving a deployment would change: Previous is
// the deployment saved now under its id (nil for a new one), Next the one
// the save would write.
type DeploymentChange struct {
	Previous *DeploymentVersion `json:"previous"`
	Next     DeploymentVersion  `json:"next"`
}

// DeploymentVersion is a deployment as the change shows it: the artifact
// version it runs, and the description agents see of its tool on /mcp.
type DeploymentVersion struct {
	ArtifactID      string `json:"artifact_id"`
	ArtifactVersion int    `json:"artifact_version"`
	ToolDescription string `json:"tool_description"`
}

// DeploymentIDParams name one deployment.
type DeploymentIDParams struct {
	DeploymentID string `json:"deployment_id"`
}

// ValidateDeploymentParams are the params of workflow.deployments.validate.
type ValidateDeploymentParams struct {
	DeploymentID string `json:"deployment_id"`
	LiveCheck    bool   `json:"live_check,omitempty"`
}

// DependencyDiag is one deployment dependency diagnostic.
type DependencyDiag struct {
	Severity    string  `json:"severity"` // error | warning
	Code        string  `json:"code"`
	LogicalRef  string  `json:"logical_ref"`
	BoundSource *string `json:"bound_source"`
	Message     string  `json:"message"`
	RepairHint  *string `json:"repair_hint"`
}

// ValidateDeploymentResult answers workflow.deployments.validate.
type ValidateDeploymentResult struct {
	DeploymentID    string           `json:"deployment_id"`
	ArtifactID      string           `json:"artifact_id"`
	ArtifactVersion int              `json:"artifact_version"`
	Status          string           `json:"status"` // runnable | unrunnable
	Diagnostics     []DependencyDiag `json:"diagnostics"`
	NextActions     NextActions      `json:"next_actions"`
}

// DeploymentSummary is one row of workflow.deployments.list.
type DeploymentSummary struct {
	ID              string `json:"id"`
	ArtifactID      string `json:"artifact_id"`
	ArtifactVersion int    `json:"artifact_version"`
	BindingCount    int    `json:"binding_count"`
	DriftPolicy     string `json:"drift_policy"`
}

// ListDeploymentsResult answers workflow.deployments.list.
type ListDeploymentsResult struct {
	Deployments []DeploymentSummary `json:"deployments"`
}

// TraceRange selects a slice of a run's trace.
type TraceRange struct {
	Start *int `json:"start,omitempty"`
	Limit *int `json:"limit,omitempty"`
}

// StartRunParams are the params of workflow.runs.start.
type StartRunParams struct {
	DeploymentID  string      `json:"deployment_id"`
	WorkflowInput Object      `json:"workflow_input,omitempty"`
	TraceRange    *TraceRange `json:"trace_range,omitempty"`
	// Wait false (an extension) answers once the run is committed, without
	// waiting for it to finish; follow it with workflow.runs.subscribe.
	Wait *bool `json:"wait,omitempty"`
	// ClientSampling true (an extension) says that the caller is an MCP
	// client that declared sampling and follows the run: an upstream
	// sampling request of a source whose client block says "sampling":
	// "client" is forwarded to it. The MCP face sets it.
	ClientSampling *bool `json:"client_sampling,omitempty"`
	// IdempotencyKey (an extension) makes the start idempotent: a second
	// start with the key, of the same deployment and input, within the
	// server's window (a day by default), answers with the first run
	// (Deduplicated) and starts none.
	IdempotencyKey *string `json:"idempotency_key,omitempty"`
}

// RunIDParams name one run.
type RunIDParams struct {
	RunID string `json:"run_id"`
}

// RunResult is the manifest's RunResult.
type RunResult struct {
	DeploymentID    string           `json:"deployment_id"`
	ArtifactID      string           `json:"artifact_id"`
	ArtifactVersion int              `json:"artifact_version"`
	Status          string           `json:"status"`
	RunID           *string          `json:"run_id"`
	ResumeReadiness *string          `json:"resume_readiness"`
	Interrupt       Object           `json:"interrupt"`
	Outcome         *string          `json:"outcome"`
	Error           *string          `json:"error"`
	Output          Object           `json:"output"`
	Diagnostics     []DependencyDiag `json:"diagnostics"`
	TraceCount      int              `json:"trace_count"`
	NextActions     NextActions      `json:"next_actions"`
	// StartedBy (an extension) names who started the run.
	StartedBy string `json:"started_by,omitempty"`
	// Deduplicated (an extension) says that a workflow.runs.start with an
	// idempotency key answered with the run an earlier start with the key
	// started, and started none.
	Deduplicated bool `json:"deduplicated,omitempty"`
	// ParentRunID and ForkedFromNode (extensions) name the run this one
	// reran or forked, and the step a fork executed from.
	ParentRunID    string `json:"parent_run_id,omitempty"`
	ForkedFromNode string `json:"forked_from_node,omitempty"`
	// Kind (an extension) is RunKindPassthrough for a pass-through call,
	// absent for a workflow's run.
	Kind string `json:"kind,omitempty"`
	// CreatedAt and UpdatedAt (extensions) are when the run was created and
	// last changed (RFC 3339, UTC), as in RunSummary: the MCP face's tasks
	// say them.
	CreatedAt      string       `json:"created_at,omitempty"`
	UpdatedAt      string       `json:"updated_at,omitempty"`
	Trace          []TraceEntry `json:"trace,omitempty"`
	TraceStart     *int         `json:"trace_start,omitempty"`
	TraceLimit     *int         `json:"trace_limit,omitempty"`
	TraceTruncated *bool        `json:"trace_truncated,omitempty"`
}

// ListRunsParams are the params of workflow.runs.list.
type ListRunsParams struct {
	Status *string `json:"status,omitempty"`
	// DeploymentID (an mcpflow extension) lists the runs of one
	// deployment only.
	DeploymentID *string `json:"deployment_id,omitempty"`
	Cursor       *string `json:"cursor,omitempty"`
	Limit        *int    `json:"limit,omitempty"`
}

// RunSummary is one row of workflow.runs.list.
type RunSummary struct {
	RunID           string `json:"run_id"`
	DeploymentID    string `json:"deployment_id"`
	ArtifactID      string `json:"artifact_id"`
	ArtifactVersion int    `json:"artifact_version"`
	Status          string `json:"status"`
	ResumeReadiness string `json:"resume_readiness"`
	DiagnosticCount int    `json:"diagnostic_count"`
	CreatedAt       string `json:"created_at"`
	UpdatedAt       string `json:"updated_at"`
	// StartedBy (an extension) names who started the run, as in RunResult.
	StartedBy string `json:"started_by,omitempty"`
	// ParentRunID and ForkedFromNode (extensions) are as in RunResult.
	ParentRunID    string `json:"parent_run_id,omitempty"`
	ForkedFromNode string `json:"forked_from_node,omitempty"`
	// Kind (an extension) is as in RunResult.
	Kind string `json:"kind,omitempty"`
}

// ListRunsResult answers workflow.runs.list.
type ListRunsResult struct {
	Runs       []RunSummary `json:"runs"`
	Total      int          `json:"total"`
	Cursor     *string      `json:"cursor"`
	NextCursor *string      `json:"next_cursor"`
	Limit      int          `json:"limit"`
}

// NextActions is advisory guidance on what to call next.
type NextActions struct {
	CanContinue         bool           `json:"can_continue"`
	CanSaveNow          *bool          `json:"can_save_now"`
	RecommendedNextTool *string        `json:"recommended_next_tool"`
	Reason              string         `json:"reason"`
	PatchExamples       []PatchExample `json:"patch_examples"`
	Warnings            []string       `json:"warnings"`
}

// PatchExample is one concrete follow-up request.
type PatchExample struct {
	Description string `json:"description"`
	Tool        string `json:"tool"`
	Request     Object `json:"request"`
}

// Connection is one row of workflow.admin.connections.list.
type Connection struct {
	ID                    string `json:"id"`
	Server                string `json:"server"`
	Account               string `json:"account"`
	Enabled               bool   `json:"enabled"`
	Metadata              Object `json:"metadata"`
	SourceConfigOwnership string `json:"source_config_ownership"`
}

// ListConnectionsResult answers workflow.admin.connections.list.
type ListConnectionsResult struct {
	Connections []Connection `json:"connections"`
	Total       int          `json:"total"`
}

// SessionStatus is mcpflow's extension of a connection status row: the
// live state of the connection's upstream session. State is idle, open,
// connecting, backoff, degraded, needs_login or closed; Generation numbers the
// connection's sessions (each new one increments it); MissedPings counts
// the keepalive pings of the open session missed in a row (the session is
// ended at the source's ping_failures); LastError never holds a secret.
// Times are epoch milliseconds, null when none.
type SessionStatus struct {
	State                string  `json:"state"`
	Generation           int64   `json:"generation"`
	SessionsOpened       int     `json:"sessions_opened"`
	Restarts             int     `json:"restarts"`
	CallsInFlight        int     `json:"calls_in_flight"`
	CallsQueued          int     `json:"calls_queued"`
	MissedPings          int     `json:"missed_pings"`
	LastError            *string `json:"last_error"`
	LastErrorAtEpochMs   *int64  `json:"last_error_at_epoch_ms"`
	LastSuccessAtEpochMs *int64  `json:"last_success_at_epoch_ms"`
	NextAttemptAtEpochMs *int64  `json:"next_attempt_at_epoch_ms"`
	// LoginHost is, in state needs_login, the host of the authorization
	// URL `mcpflow sources login` goes to.
	LoginHost *string `json:"login_host,omitempty"`
	// Logs are the connection's own log messages, newest last (an
	// extension).
	Logs []ConnectionLog `json:"logs,omitempty"`
	// Cause (an mcpflow extension) is LastError in a user's words, what
	// to act on (session.Actionable), while the session is failing.
	Cause *string `json:"cause,omitempty"`
}

// ConnectionLog is a log message of a connection's upstream session that
// was no call's (an extension): it came while no call was in flight on
// the session, or while several were (CallsInFlight). Data is bounded and
// redacted of the connection's secrets; Generation is 0 when the session
// it came on is an earlier one whose generation is not known.
type ConnectionLog struct {
	AtEpochMs     int64           `json:"at_epoch_ms"`
	Generation    int64           `json:"generation"`
	CallsInFlight int             `json:"calls_in_flight"`
	Level         string          `json:"level"`
	Logger        string          `json:"logger,omitempty"`
	Data          json.RawMessage `json:"data,omitempty"`
	Truncated     bool            `json:"truncated,omitempty"`
}

// ConnectionStatus is one row of workflow.admin.connection_statuses.list.
type ConnectionStatus struct {
	ConnectionID     string        `json:"connection_id"`
	Server           string        `json:"server"`
	Account          string        `json:"account"`
	Enabled          bool          `json:"enabled"`
	HasSnapshot      bool          `json:"has_snapshot"`
	FetchedAtEpochMs *int64        `json:"fetched_at_epoch_ms"`
	MaxAgeSeconds    *int          `json:"max_age_seconds"`
	NodeCount        int           `json:"node_count"`
	ResourceCount    int           `json:"resource_count"`
	PromptCount      int           `json:"prompt_count"`
	Session          SessionStatus `json:"session"`
}

// ListConnectionStatusesResult answers
// workflow.admin.connection_statuses.list.
type ListConnectionStatusesResult struct {
	Statuses []ConnectionStatus `json:"statuses"`
	Total    int                `json:"total"`
}

// RefreshCatalogParams are the params of
// workflow.admin.connections.refresh_catalog (an mcpflow extension).
type RefreshCatalogParams struct {
	ConnectionID string `json:"connection_id"`
}

// RefreshCatalogResult answers refresh_catalog.
type RefreshCatalogResult struct {
	ConnectionID     string `json:"connection_id"`
	FetchedAtEpochMs int64  `json:"fetched_at_epoch_ms"`
	NodeCount        int    `json:"node_count"`
	ResourceCount    int    `json:"resource_count"`
	PromptCount      int    `json:"prompt_count"`
}

// More method names: revisioned workspace edits and run traces.
const (
	MethodWorkspaceList            = "workflow.draft_workspaces.list"
	MethodWorkspaceSetName         = "workflow.draft_workspaces.set_name"
	MethodWorkspaceSetStart        = "workflow.draft_workspaces.set_start"
	MethodWorkspaceSetRoute        = "workflow.draft_workspaces.set_route"
	MethodWorkspaceReplaceDocument = "workflow.draft_workspaces.replace_document"
	MethodWorkspaceValidate        = "workflow.draft_workspaces.validate"
	MethodWorkspaceDelete          = "workflow.draft_workspaces.delete"
	MethodWorkspacePatch           = "workflow.draft_workspaces.patch"
	MethodRunsTrace                = "workflow.runs.trace"
	MethodRunsResume               = "workflow.runs.resume"
	// MethodRunsCancel is an extension to the reference contract.
	MethodRunsCancel = "workflow.runs.cancel"
)

// ResumeRunParams are the params of workflow.runs.resume.
type ResumeRunParams struct {
	RunID         string      `json:"run_id"`
	ResumePayload Object      `json:"resume_payload,omitempty"`
	ResumeOutcome *string     `json:"resume_outcome,omitempty"`
	TraceRange    *TraceRange `json:"trace_range,omitempty"`
}

// CancelRunParams are the params of workflow.runs.cancel.
type CancelRunParams struct {
	RunID  string  `json:"run_id"`
	Reason *string `json:"reason,omitempty"`
}

// ListWorkspacesResult answers workflow.draft_workspaces.list.
type ListWorkspacesResult struct {
	Workspaces []WorkspaceResult `json:"workspaces"`
}

// WorkspaceIDParams name one workspace.
type WorkspaceIDParams struct {
	WorkspaceID string `json:"workspace_id"`
}

// SetNameParams are the params of workflow.draft_workspaces.set_name.
type SetNameParams struct {
	WorkspaceID string `json:"workspace_id"`
	Revision    int    `json:"revision"`
	Name        string `json:"name"`
}

// SetStartParams are the params of workflow.draft_workspaces.set_start.
type SetStartParams struct {
	WorkspaceID string `json:"workspace_id"`
	Revision    int    `json:"revision"`
	StepID      string `json:"step_id"`
}

// SetRouteParams are the params of workflow.draft_workspaces.set_route.
type SetRouteParams struct {
	WorkspaceID string `json:"workspace_id"`
	Revision    int    `json:"revision"`
	StepID      string `json:"step_id"`
	Outcome     string `json:"outcome"`
	Target      string `json:"target"`
}

// ReplaceDocumentParams are the params of
// workflow.draft_workspaces.replace_document.
type ReplaceDocumentParams struct {
	WorkspaceID string `json:"workspace_id"`
	Revision    int    `json:"revision"`
	Draft       Object `json:"draft"`
}

// DeleteWorkspaceResult answers workflow.draft_workspaces.delete.
type DeleteWorkspaceResult struct {
	WorkspaceID string `json:"workspace_id"`
	Deleted     bool   `json:"deleted"`
	Status      string `json:"status"` // deleted | not_found
}

// TraceParams are the params of workflow.runs.trace.
type TraceParams struct {
	RunID      string     `json:"run_id"`
	TraceRange TraceRange `json:"trace_range"`
}
