package service

import (
	"context"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/authoring"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// patchDraft answers workflow.drafts.patch: it patches a draft document
// that is not stored anywhere and validates the result.
func (s *Service) patchDraft(_ context.Context, p protocol.PatchDraftParams) (protocol.PatchDraftResult, error) {
	switch {
	case p.Draft == nil:
		return protocol.PatchDraftResult{}, invalidParams("invalid params: draft must be a JSON object")
	case p.Patch == nil:
		return protocol.PatchDraftResult{}, invalidParams("invalid params: patch must be a list of operations")
	}
	patched, refused := authoring.ApplyPatch(p.Draft, p.Patch)
	if refused != nil {
		return protocol.PatchDraftResult{Status: statusInvalid, Diagnostics: []protocol.Diagnostic{apiDiagnostic(*refused)}}, nil
	}
	plan, diags, err := s.compileDocument(patched)
	switch {
	case err != nil:
		return protocol.PatchDraftResult{}, err
	case plan == nil:
		return protocol.PatchDraftResult{Status: statusInvalid, Diagnostics: apiDiagnostics(diags), Draft: patched}, nil
	}
	raw, err := apiPlan(*plan)
	if err != nil {
		return protocol.PatchDraftResult{}, err
	}
	return protocol.PatchDraftResult{Status: statusValid, Diagnostics: apiDiagnostics(diags), Draft: patched, CompiledPlan: raw}, nil
}

// patchParams are a workspace patch as a step edit takes it: the patch, and
// what the edit found when the patch could not be applied.
type patchParams struct {
	ops     []workflow.Object
	refused *workflow.Diagnostic
	current workflow.Object
}

func (p *patchParams) Check() error {
	if p.ops == nil {
		return invalidParams("invalid params: patch must be a list of operations")
	}
	return nil
}

// patchDocument applies the patch; one that cannot be applied is noted in
// p and leaves the document as it is (so that nothing is stored).
func patchDocument(doc workflow.Object, p *patchParams, _ workflow.Lookup) (workflow.Object, error) {
	patched, refused := authoring.ApplyPatch(doc, p.ops)
	if refused != nil {
		p.refused, p.current = refused, doc
		return doc, nil
	}
	return patched, nil
}

// patchWorkspace answers workflow.draft_workspaces.patch. A patch that
// cannot be applied is not a revision: the answer is the workspace with
// status "invalid" and the patch's diagnostic, and nothing is stored.
func (s *Service) patchWorkspace(ctx context.Context, p protocol.PatchWorkspaceParams) (protocol.DraftEditResult, error) {
	op := &patchParams{ops: p.Patch}
	res, err := stepEdit(s, ctx, p.WorkspaceID, p.Revision, patchDocument, op)
	if err == nil && op.refused != nil {
		res.Status, res.Diagnostics = statusInvalid, []protocol.Diagnostic{apiDiagnostic(*op.refused)}
		res.NextActions = afterEdit(res.WorkspaceResult, op.current)
	}
	return res, err
}

// contractParams is the contract part of a set_contract or create_empty.
func contractParams(input, state, output protocol.Object, outcomes []string) authoring.ContractParams {
	return authoring.ContractParams{InputSchema: input, StateSchema: state, OutputSchema: output, Outcomes: outcomes}
}

// setContract answers workflow.draft_workspaces.set_contract. The values
// are checked before the revision, as the reference does.
func (s *Service) setContract(ctx context.Context, p protocol.SetContractParams) (protocol.DraftEditResult, error) {
	return stepEdit(s, ctx, p.WorkspaceID, p.Revision, authoring.SetContract,
		contractParams(p.InputSchema, p.StateSchema, p.OutputSchema, p.Outcomes))
}

// createEmpty answers workflow.draft_workspaces.create_empty: a workspace
// at revision 1 whose draft has the contract and no steps yet.
func (s *Service) createEmpty(ctx context.Context, p protocol.CreateEmptyParams) (protocol.DraftEditResult, error) {
	if err := checkRecordID("workspace_id", p.WorkspaceID); err != nil {
		return protocol.DraftEditResult{}, err
	}
	doc, err := authoring.Empty(authoring.EmptyParams{Name: p.Name, ContractParams: contractParams(p.InputSchema, p.StateSchema, p.OutputSchema, p.Outcomes)})
	if err != nil {
		return protocol.DraftEditResult{}, authoringErr(err)
	}
	diags := s.validateDocument(doc)
	now := s.now().UnixMilli()
	ws := store.Workspace{
		ID: p.WorkspaceID, Revision: 1, Title: p.Title, Draft: doc,
		Status: statusOf(diags), Diagnostics: diags, CreatedAtMs: now, UpdatedAtMs: now,
	}
	existing, conflicted, err := s.createWorkspace(ctx, ws)
	switch {
	case err != nil:
		return protocol.DraftEditResult{}, err
	case conflicted:
		res := conflictWith(existing, p.WorkspaceID)
		return protocol.DraftEditResult{WorkspaceResult: res, NextActions: afterEdit(res, existing.Draft)}, nil
	}
	res := workspaceResult(ws, false)
	return protocol.DraftEditResult{WorkspaceResult: res, NextActions: afterEdit(res, doc)}, nil
}

// createWrapper answers workflow.draft_workspaces.create_wrapper: it is
// create_artifact with the kind fixed to "wrapper".
func (s *Service) createWrapper(ctx context.Context, p protocol.CreateWrapperParams) (any, error) {
	return s.createArtifact(ctx, protocol.CreateArtifactParams{
		WorkspaceID: p.WorkspaceID, ArtifactID: p.ArtifactID, Version: p.Version, Title: p.Title, Outcomes: p.Outcomes,
		Kind: ptr(kindWrapper), Description: p.Description, RequiredCapabilities: p.RequiredCapabilities,
		SourceBindings: p.SourceBindings, CreatedFromCatalogVersion: p.CreatedFromCatalogVersion,
	})
}

// removeRoute answers workflow.draft_workspaces.remove_route. Removing a
// route that does not exist changes nothing and keeps the revision.
func (s *Service) removeRoute(ctx context.Context, p protocol.RemoveRouteParams) (protocol.DraftEditResult, error) {
	return stepEdit(s, ctx, p.WorkspaceID, p.Revision, authoring.RemoveRoute, authoring.RemoveRouteParams{StepID: p.StepID, Outcome: p.Outcome})
}

// removeStep answers workflow.draft_workspaces.remove_step. Removing a
// step that does not exist changes nothing and keeps the revision.
func (s *Service) removeStep(ctx context.Context, p protocol.RemoveStepParams) (protocol.DraftEditResult, error) {
	return stepEdit(s, ctx, p.WorkspaceID, p.Revision, authoring.RemoveStep, authoring.RemoveStepParams{StepID: p.StepID})
}

// removeBinding answers workflow.draft_workspaces.remove_binding. Naming
// none is a ValueError; naming only bindings that are not there changes
// nothing and keeps the revision.
func (s *Service) removeBinding(ctx context.Context, p protocol.RemoveBindingParams) (protocol.DraftEditResult, error) {
	return stepEdit(s, ctx, p.WorkspaceID, p.Revision, authoring.RemoveBinding,
		authoring.RemoveBindingParams{StepID: p.StepID, Inputs: p.Inputs, Outputs: p.Outputs})
}
