package protocol

// Method names: whole-document and binding edits of drafts and draft
// workspaces.
const (
	MethodDraftsPatch                        = "workflow.drafts.patch"
	MethodDraftsCreateFromCapability         = "workflow.drafts.create_from_capability"
	MethodWorkspaceCreateEmpty               = "workflow.draft_workspaces.create_empty"
	MethodWorkspaceCreateWrapper             = "workflow.draft_workspaces.create_wrapper"
	MethodWorkspaceSetContract               = "workflow.draft_workspaces.set_contract"
	MethodWorkspaceSetStepInputMap           = "workflow.draft_workspaces.set_step_input_map"
	MethodWorkspaceSetStepInputBindings      = "workflow.draft_workspaces.set_step_input_bindings"
	MethodWorkspaceSetStepOutputMap          = "workflow.draft_workspaces.set_step_output_map"
	MethodWorkspaceSetStepOutputBindings     = "workflow.draft_workspaces.set_step_output_bindings"
	MethodWorkspaceSetWorkflowOutputMap      = "workflow.draft_workspaces.set_workflow_output_map"
	MethodWorkspaceSetWorkflowOutputBindings = "workflow.draft_workspaces.set_workflow_output_bindings"
	MethodWorkspaceRemoveRoute               = "workflow.draft_workspaces.remove_route"
	MethodWorkspaceRemoveStep                = "workflow.draft_workspaces.remove_step"
	MethodWorkspaceRemoveBinding             = "workflow.draft_workspaces.remove_binding"
)

// PatchDraftParams are the params of workflow.drafts.patch: a draft
// document and an RFC 6902 JSON Patch to apply to it.
type PatchDraftParams struct {
	Draft Object   `json:"draft"`
	Patch []Object `json:"patch"`
}

// PatchDraftResult is the manifest's PatchDraftResult: PatchedDraftValidResult
// (status "valid", the patched draft and its compiled plan) or
// PatchedDraftInvalidResult (status "invalid", with the patched draft unless
// the patch itself could not be applied).
type PatchDraftResult struct {
	Status       string       `json:"status"`
	Diagnostics  []Diagnostic `json:"diagnostics"`
	Draft        Object       `json:"draft,omitzero"`
	CompiledPlan Plan         `json:"compiled_plan,omitempty"`
}

// PatchWorkspaceParams are the params of workflow.draft_workspaces.patch.
type PatchWorkspaceParams struct {
	WorkspaceID string   `json:"workspace_id"`
	Revision    int      `json:"revision"`
	Patch       []Object `json:"patch"`
}

// CreateEmptyParams are the params of workflow.draft_workspaces.create_empty.
// Outcomes default to ["ok"]; absent schemas to an object schema with no
// properties.
type CreateEmptyParams struct {
	WorkspaceID  string   `json:"workspace_id"`
	Name         string   `json:"name"`
	Title        *string  `json:"title,omitempty"`
	InputSchema  Object   `json:"input_schema,omitempty"`
	StateSchema  Object   `json:"state_schema,omitempty"`
	OutputSchema Object   `json:"output_schema,omitempty"`
	Outcomes     []string `json:"outcomes,omitempty"`
}

// CreateWrapperParams are the params of
// workflow.draft_workspaces.create_wrapper: those of create_artifact, with
// the kind fixed to "wrapper".
type CreateWrapperParams struct {
	WorkspaceID               string            `json:"workspace_id"`
	ArtifactID                string            `json:"artifact_id"`
	Version                   int               `json:"version"`
	Title                     string            `json:"title"`
	Outcomes                  []string          `json:"outcomes"`
	Description               *string           `json:"description,omitempty"`
	RequiredCapabilities      map[string]Object `json:"required_capabilities,omitempty"`
	SourceBindings            map[string]string `json:"source_bindings,omitempty"`
	CreatedFromCatalogVersion *string           `json:"created_from_catalog_version,omitempty"`
}

// SetContractParams are the params of workflow.draft_workspaces.set_contract:
// each field given replaces the draft's one; at least one must be given.
type SetContractParams struct {
	WorkspaceID  string   `json:"workspace_id"`
	Revision     int      `json:"revision"`
	InputSchema  Object   `json:"input_schema,omitempty"`
	StateSchema  Object   `json:"state_schema,omitempty"`
	OutputSchema Object   `json:"output_schema,omitempty"`
	Outcomes     []string `json:"outcomes,omitempty"`
}

// SetStepInputMapParams are the params of
// workflow.draft_workspaces.set_step_input_map: graph source path -> node-local
// target.
type SetStepInputMapParams struct {
	WorkspaceID string            `json:"workspace_id"`
	Revision    int               `json:"revision"`
	StepID      string            `json:"step_id"`
	InputMap    map[string]string `json:"input_map"`
	Merge       bool              `json:"merge,omitempty"`
}

// SetStepOutputMapParams are the params of
// workflow.draft_workspaces.set_step_output_map: node-local source -> state
// path.
type SetStepOutputMapParams struct {
	WorkspaceID string            `json:"workspace_id"`
	Revision    int               `json:"revision"`
	StepID      string            `json:"step_id"`
	OutputMap   map[string]string `json:"output_map"`
	Merge       bool              `json:"merge,omitempty"`
}

// SetWorkflowOutputMapParams are the params of
// workflow.draft_workspaces.set_workflow_output_map: graph source path ->
// output target.
type SetWorkflowOutputMapParams struct {
	WorkspaceID string            `json:"workspace_id"`
	Revision    int               `json:"revision"`
	OutputMap   map[string]string `json:"output_map"`
	Merge       bool              `json:"merge,omitempty"`
}

// SetStepInputBindingsParams are the params of
// workflow.draft_workspaces.set_step_input_bindings: the step's complete,
// ordered input binding list.
type SetStepInputBindingsParams struct {
	WorkspaceID string         `json:"workspace_id"`
	Revision    int            `json:"revision"`
	StepID      string         `json:"step_id"`
	Bindings    []InputBinding `json:"bindings"`
}

// SetStepOutputBindingsParams are the params of
// workflow.draft_workspaces.set_step_output_bindings.
type SetStepOutputBindingsParams struct {
	WorkspaceID string          `json:"workspace_id"`
	Revision    int             `json:"revision"`
	StepID      string          `json:"step_id"`
	Bindings    []OutputBinding `json:"bindings"`
}

// SetWorkflowOutputBindingsParams are the params of
// workflow.draft_workspaces.set_workflow_output_bindings: path or value
// bindings only.
type SetWorkflowOutputBindingsParams struct {
	WorkspaceID string         `json:"workspace_id"`
	Revision    int            `json:"revision"`
	Bindings    []InputBinding `json:"bindings"`
}

// RemoveRouteParams are the params of workflow.draft_workspaces.remove_route.
type RemoveRouteParams struct {
	WorkspaceID string `json:"workspace_id"`
	Revision    int    `json:"revision"`
	StepID      string `json:"step_id"`
	Outcome     string `json:"outcome"`
}

// RemoveStepParams are the params of workflow.draft_workspaces.remove_step.
type RemoveStepParams struct {
	WorkspaceID string `json:"workspace_id"`
	Revision    int    `json:"revision"`
	StepID      string `json:"step_id"`
}

// RemoveBindingParams are the params of
// workflow.draft_workspaces.remove_binding: the node-local targets of input
// bindings and the node-local sources of output bindings to remove.
type RemoveBindingParams struct {
	WorkspaceID string   `json:"workspace_id"`
	Revision    int      `json:"revision"`
	StepID      string   `json:"step_id"`
	Inputs      []string `json:"inputs,omitempty"`
	Outputs     []string `json:"outputs,omitempty"`
}
