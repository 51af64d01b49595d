package service

import (
	"context"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/records"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/authoring"
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// workspaceMethods are workflow.draft_workspaces.*: a workspace's life
// (workspaces.go, edits.go), its whole-document and binding edits
// (document_edits*.go), its step edits (step_edits.go) and its compile
// (compile.go).
func (s *Service) workspaceMethods() map[string]rpc.Method {
	return map[string]rpc.Method{
		protocol.MethodWorkspaceFromCapability:            forAuthor(s.createFromCapability),
		protocol.MethodWorkspaceGet:                       forRead(s.getWorkspace),
		protocol.MethodWorkspaceCreateArtifact:            forAuthor(s.createArtifact),
		protocol.MethodWorkspaceList:                      forRead(s.listWorkspaces),
		protocol.MethodWorkspaceSetName:                   forAuthor(s.setName),
		protocol.MethodWorkspaceSetStart:                  forAuthor(s.setStart),
		protocol.MethodWorkspaceSetRoute:                  forAuthor(s.setRoute),
		protocol.MethodWorkspaceReplaceDocument:           forAuthor(s.replaceDocument),
		protocol.MethodWorkspaceValidate:                  forRead(s.validateWorkspace),
		protocol.MethodWorkspaceDelete:                    forAuthor(s.deleteWorkspace),
		protocol.MethodWorkspaceCompile:                   forRead(s.compileWorkspace),
		protocol.MethodWorkspacePatch:                     forAuthor(s.patchWorkspace),
		protocol.MethodWorkspaceCreateEmpty:               forAuthor(s.createEmpty),
		protocol.MethodWorkspaceCreateWrapper:             forAuthor(s.createWrapper),
		protocol.MethodWorkspaceSetContract:               forAuthor(s.setContract),
		protocol.MethodWorkspaceSetStepInputMap:           forAuthor(s.setStepInputMap),
		protocol.MethodWorkspaceSetStepInputBindings:      forAuthor(s.setStepInputBindings),
		protocol.MethodWorkspaceSetStepOutputMap:          forAuthor(s.setStepOutputMap),
		protocol.MethodWorkspaceSetStepOutputBindings:     forAuthor(s.setStepOutputBindings),
		protocol.MethodWorkspaceSetWorkflowOutputMap:      forAuthor(s.setWorkflowOutputMap),
		protocol.MethodWorkspaceSetWorkflowOutputBindings: forAuthor(s.setWorkflowOutputBindings),
		protocol.MethodWorkspaceRemoveRoute:               forAuthor(s.removeRoute),
		protocol.MethodWorkspaceRemoveStep:                forAuthor(s.removeStep),
		protocol.MethodWorkspaceRemoveBinding:             forAuthor(s.removeBinding),
		protocol.MethodWorkspaceAddStep:                   forAuthor(s.addStep),
		protocol.MethodWorkspaceAddStepFromCapability:     forAuthor(s.addStepFromCapability),
		protocol.MethodWorkspaceBind:                      forAuthor(s.bind),
		protocol.MethodWorkspaceBranch:                    forAuthor(s.branch),
		protocol.MethodWorkspaceHandle:                    forAuthor(s.handleRoutes),
		protocol.MethodWorkspaceUpdateCapabilityStep:      forAuthor(s.updateCapabilityStep),
	}
}

// Workspace statuses.
const (
	statusValid    = "valid"
	statusInvalid  = "invalid"
	statusConflict = "conflict"
)

// checkRecordID refuses an id no record may have (records.CheckID).
func checkRecordID(kind, id string) error { return recordsErr(records.CheckID(kind, id)) }

func (s *Service) createFromCapability(ctx context.Context, p protocol.CreateFromCapabilityParams) (protocol.CreateFromCapabilityResult, error) {
	input, err := languageInput(p.Input)
	if err != nil {
		return protocol.CreateFromCapabilityResult{}, err
	}
	output, err := languageOutput(p.Output)
	if err != nil {
		return protocol.CreateFromCapabilityResult{}, err
	}
	if err := checkRecordID("workspace_id", p.WorkspaceID); err != nil {
		return protocol.CreateFromCapabilityResult{}, err
	}
	c, err := s.capability(ctx, p.CapabilityName)
	if err != nil {
		return protocol.CreateFromCapabilityResult{}, err
	}
	errorSource, ok := p.ErrorMessageSource.(string)
	if p.ErrorMessageSource != nil && !ok {
		return protocol.CreateFromCapabilityResult{}, invalidParams("invalid params: error_message_source must be a graph path string")
	}
	draft, hints := workflow.Scaffold(c, workflow.ScaffoldOptions{
		Name: deref(p.Name), InputSchema: p.InputSchema, StateSchema: p.StateSchema, OutputSchema: p.OutputSchema,
		Input: input, Output: output, InputMap: p.InputMap, OutputMap: p.OutputMap, ErrorMessageSource: errorSource,
	})
	diags := workflow.ValidateDraft(draft, s.findCapability)
	doc, err := toObject(draft)
	if err != nil {
		return protocol.CreateFromCapabilityResult{}, err
	}
	now := s.now().UnixMilli()
	ws := store.Workspace{
		ID: p.WorkspaceID, Revision: 1, Title: ptr(firstNonEmpty(deref(p.Title), records.ScaffoldTitle(draft.Name))), Draft: doc,
		Status: statusOf(diags), Diagnostics: diags, CreatedAtMs: now, UpdatedAtMs: now,
	}
	result := protocol.CreateFromCapabilityResult{WrapperHints: apiHints(hints)}
	existing, conflicted, err := s.createWorkspace(ctx, ws)
	switch {
	case err != nil:
		return result, err
	case conflicted:
		result.WorkspaceResult = conflictWith(existing, p.WorkspaceID)
		result.NextActions = nextActions(false, nil, nil, "The workspace already exists; choose another workspace_id or edit it.", nil)
		return result, nil
	}
	result.WorkspaceResult = workspaceResult(ws, true)
	result.NextActions = afterScaffold(ws, hints)
	return result, nil
}

// createWorkspace stores ws, or answers the workspace under its id,
// conflicted (records.CreateWorkspace).
func (s *Service) createWorkspace(ctx context.Context, ws store.Workspace) (store.Workspace, bool, error) {
	existing, conflicted, err := records.CreateWorkspace(ctx, s.Store, ws)
	return existing, conflicted, recordsErr(err)
}

// conflictWith answers a create whose workspace id is taken: the
// workspace there, in conflict.
func conflictWith(existing store.Workspace, id string) protocol.WorkspaceResult {
	res := workspaceResult(existing, false)
	res.Status = statusConflict
	res.Diagnostics = []protocol.Diagnostic{{Code: "workspace_exists", Path: "workspace_id", Message: fmt.Sprintf("workspace %q already exists", id)}}
	return res
}

// afterScaffold advises the next call after a workspace was bootstrapped.
func afterScaffold(ws store.Workspace, h workflow.Hints) protocol.NextActions {
	valid := ws.Status == statusValid
	if valid && h.Confidence == "high" && len(h.MissingDecisions) == 0 {
		return nextActions(true, &valid, ptr(protocol.MethodWorkspaceValidate),
			"The scaffold maps the capability's declared inputs and outputs; validate it, then save it as an artifact.", nil)
	}
	return nextActions(true, &valid, ptr(protocol.MethodWorkspacePatch),
		"The scaffold needs decisions before it is a useful wrapper.",
		[]protocol.PatchExample{{
			Description: "Choose which capability output fields reach workflow state.",
			Tool:        protocol.MethodWorkspacePatch,
			Request: protocol.Object{"workspace_id": ws.ID, "revision": ws.Revision, "patch": []any{
				protocol.Object{"op": "replace", "path": "/steps/call/output", "value": []any{}},
			}},
		}})
}

func (s *Service) getWorkspace(ctx context.Context, p protocol.GetWorkspaceParams) (protocol.WorkspaceResult, error) {
	ws, err := s.Store.GetWorkspace(ctx, p.WorkspaceID)
	if err != nil {
		return protocol.WorkspaceResult{}, storeErr(err, fmt.Sprintf("draft workspace %q", p.WorkspaceID))
	}
	return workspaceResult(ws, p.IncludeDraft), nil
}

// workspaceResult projects a stored workspace.
func workspaceResult(ws store.Workspace, includeDraft bool) protocol.WorkspaceResult {
	r := protocol.WorkspaceResult{
		WorkspaceID: ws.ID, Revision: ws.Revision, Title: ws.Title, Status: ws.Status,
		Diagnostics: apiDiagnostics(ws.Diagnostics), Summary: summaryOf(ws.Draft),
	}
	if r.Diagnostics == nil {
		r.Diagnostics = []protocol.Diagnostic{}
	}
	if includeDraft {
		r.Draft = ws.Draft
	}
	return r
}

// summaryOf projects the graph facts of a draft (authoring.Summarize).
func summaryOf(doc workflow.Object) protocol.WorkspaceSummary {
	g := authoring.Summarize(doc)
	return protocol.WorkspaceSummary{Name: g.Name, Start: g.Start, StepCount: g.StepCount, RouteCount: g.RouteCount, Steps: g.Steps}
}

// checkDraft decodes a draft document and validates it against the
// language and the live capabilities.
func (s *Service) checkDraft(doc workflow.Object) (workflow.Draft, []workflow.Diagnostic) {
	return authoring.Check(doc, s.findCapability)
}

func statusOf(diags []workflow.Diagnostic) string {
	if len(workflow.Blocking(diags)) > 0 {
		return statusInvalid
	}
	return statusValid
}

func nextActions(canContinue bool, canSave *bool, tool *string, reason string, examples []protocol.PatchExample) protocol.NextActions {
	if examples == nil {
		examples = []protocol.PatchExample{}
	}
	return protocol.NextActions{CanContinue: canContinue, CanSaveNow: canSave, RecommendedNextTool: tool, Reason: reason, PatchExamples: examples, Warnings: []string{}}
}

func ptr[T any](v T) *T { return &v }
