package protocol

// Method names: compiling and validating drafts, saving raw plans.
const (
	MethodWorkspaceCompile        = "workflow.draft_workspaces.compile"
	MethodDraftsValidate          = "workflow.drafts.validate"
	MethodArtifactsCreateFromPlan = "workflow.artifacts.create_from_plan"
)

// ValidateDraftParams are the params of workflow.drafts.validate.
type ValidateDraftParams struct {
	Draft Object `json:"draft"`
}

// CompiledWorkspace is the manifest's CompileDraftWorkspaceSuccess: a
// valid workspace's raw plan and what it depends on, keyed
// "<source>.<capability_key>".
type CompiledWorkspace struct {
	CompiledPlan         Plan                          `json:"compiled_plan"`
	RequiredCapabilities map[string]RequiredCapability `json:"required_capabilities"`
}

// InvalidDraft is the manifest's InvalidDraftResult: status "invalid" and
// every finding, at least one of them an error.
type InvalidDraft struct {
	Status      string       `json:"status"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

// ValidDraft is the manifest's ValidDraftResult: status "valid", the
// non-blocking findings (warnings; usually none) and the compiled plan.
type ValidDraft struct {
	Status       string       `json:"status"`
	Diagnostics  []Diagnostic `json:"diagnostics"`
	CompiledPlan Plan         `json:"compiled_plan"`
}

// CompileWorkspaceResult decodes either answer of
// workflow.draft_workspaces.compile: CompiledPlan is nil when Status is
// "invalid".
type CompileWorkspaceResult struct {
	CompiledPlan         Plan                          `json:"compiled_plan,omitempty"`
	RequiredCapabilities map[string]RequiredCapability `json:"required_capabilities,omitempty"`
	Status               string                        `json:"status,omitempty"`
	Diagnostics          []Diagnostic                  `json:"diagnostics,omitempty"`
}

// ValidateDraftResult decodes either answer of workflow.drafts.validate:
// CompiledPlan is nil when Status is "invalid".
type ValidateDraftResult struct {
	Status       string       `json:"status"`
	Diagnostics  []Diagnostic `json:"diagnostics"`
	CompiledPlan Plan         `json:"compiled_plan,omitempty"`
}

// CreateFromPlanParams are the params of
// workflow.artifacts.create_from_plan. Plan is a raw plan (the JSON form of
// workflow.Plan; outcomes and output may be left out).
type CreateFromPlanParams struct {
	ArtifactID                string            `json:"artifact_id"`
	Version                   int               `json:"version"`
	Title                     string            `json:"title"`
	Plan                      Object            `json:"plan"`
	Outcomes                  []string          `json:"outcomes"`
	Kind                      *string           `json:"kind,omitempty"`
	Description               *string           `json:"description,omitempty"`
	RequiredCapabilities      map[string]Object `json:"required_capabilities,omitempty"`
	SourceBindings            map[string]string `json:"source_bindings,omitempty"`
	CreatedFromCatalogVersion *string           `json:"created_from_catalog_version,omitempty"`
}

// SaveArtifactResult is the manifest's SaveArtifactResult.
type SaveArtifactResult struct {
	ArtifactID string `json:"artifact_id"`
	Version    int    `json:"version"`
	Saved      bool   `json:"saved"`
}
