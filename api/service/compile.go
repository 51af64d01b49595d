package service

import (
	"context"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/records"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/authoring"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// compileWorkspace answers workflow.draft_workspaces.compile: a valid
// workspace's raw plan and requirements, or its diagnostics. It reads the
// workspace and changes nothing, not even its stored status.
func (s *Service) compileWorkspace(ctx context.Context, p protocol.WorkspaceIDParams) (any, error) {
	ws, err := s.Store.GetWorkspace(ctx, p.WorkspaceID)
	if err != nil {
		return nil, storeErr(err, fmt.Sprintf("draft workspace %q", p.WorkspaceID))
	}
	plan, diags, err := s.compileDocument(ws.Draft)
	switch {
	case err != nil:
		return nil, err
	case plan == nil:
		return protocol.InvalidDraft{Status: statusInvalid, Diagnostics: apiDiagnostics(diags)}, nil
	}
	reqs, err := s.requirements(*plan, nil, nil, s.findCapability)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]store.RequiredCapability, len(reqs))
	for _, r := range reqs {
		byName[r.Ref.Source+"."+r.Ref.CapabilityKey] = r
	}
	raw, err := apiPlan(*plan)
	if err != nil {
		return nil, err
	}
	return protocol.CompiledWorkspace{CompiledPlan: raw, RequiredCapabilities: apiRequirementsByName(byName)}, nil
}

// validateDraft answers workflow.drafts.validate for a draft document
// that is not stored anywhere.
func (s *Service) validateDraft(_ context.Context, p protocol.ValidateDraftParams) (any, error) {
	if p.Draft == nil {
		return nil, invalidParams("invalid params: draft must be a JSON object")
	}
	plan, diags, err := s.compileDocument(p.Draft)
	switch {
	case err != nil:
		return nil, err
	case plan == nil:
		return protocol.InvalidDraft{Status: statusInvalid, Diagnostics: apiDiagnostics(diags)}, nil
	}
	raw, err := apiPlan(*plan)
	if err != nil {
		return nil, err
	}
	return protocol.ValidDraft{Status: statusValid, Diagnostics: apiDiagnostics(diags), CompiledPlan: raw}, nil
}

// compileDocument checks a draft document against the language and the
// live capabilities and compiles it when no finding is an error. diags
// are every finding (never nil); plan is nil when one of them blocks.
func (s *Service) compileDocument(doc workflow.Object) (*workflow.Plan, []workflow.Diagnostic, error) {
	plan, diags, err := authoring.Compile(doc, s.findCapability)
	return plan, diags, authoringErr(err)
}

// createFromPlan answers workflow.artifacts.create_from_plan: it validates
// a raw plan, rewrites bound concrete sources to logical ones, records
// the requirements and saves the artifact as createArtifact does.
func (s *Service) createFromPlan(ctx context.Context, p protocol.CreateFromPlanParams) (protocol.SaveArtifactResult, error) {
	if err := checkArtifactHeader(p); err != nil {
		return protocol.SaveArtifactResult{}, err
	}
	plan, err := decodePlan(p.Plan)
	if err != nil {
		return protocol.SaveArtifactResult{}, err
	}
	if diags := workflow.Blocking(workflow.ValidatePlan(plan, authoring.ThroughBindings(s.findCapability, p.SourceBindings))); len(diags) > 0 {
		return protocol.SaveArtifactResult{}, invalidPlan(plan.Name, diags)
	}
	a, err := s.saveFromPlan(ctx, records.Header{
		ID: p.ArtifactID, Version: p.Version, Title: p.Title, Kind: deref(p.Kind), Description: p.Description, Outcomes: p.Outcomes,
		SourceBindings: p.SourceBindings, RequiredCapabilities: p.RequiredCapabilities, CreatedFromCatalogVersion: p.CreatedFromCatalogVersion,
	}, plan)
	if err != nil {
		return protocol.SaveArtifactResult{}, err
	}
	s.recordArtifactSaved(ctx, a, protocol.Object{"created_from_plan": true})
	return protocol.SaveArtifactResult{ArtifactID: a.ID, Version: a.Version, Saved: true}, nil
}

// checkArtifactHeader checks the params that name and describe the
// artifact (the edge checks them against the contract too).
func checkArtifactHeader(p protocol.CreateFromPlanParams) error {
	if err := checkRecordID("artifact_id", p.ArtifactID); err != nil {
		return err
	}
	switch kind := deref(p.Kind); {
	case p.Version < 1:
		return invalidParams("invalid params: version must be 1 or more, not %d", p.Version)
	case p.Title == "":
		return invalidParams("invalid params: title must not be empty")
	case p.Plan == nil:
		return invalidParams("invalid params: plan must be a JSON object")
	case p.Kind != nil && kind != kindWorkflow && kind != kindWrapper:
		return invalidParams("invalid params: kind is %q or %q, not %q", kindWorkflow, kindWrapper, kind)
	}
	return nil
}

// decodePlan decodes a raw plan strictly (authoring.DecodePlan); what
// does not decode whole is invalid params.
func decodePlan(raw workflow.Object) (workflow.Plan, error) {
	plan, err := authoring.DecodePlan(raw)
	return plan, authoringErr(err)
}

// invalidPlan is the ValueError refusing a plan: its first blocking
// finding, and how many more there are.
func invalidPlan(name string, blocking []workflow.Diagnostic) error {
	return authoringErr(authoring.PlanRefusal(name, blocking))
}
