package service

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/mcpflow/mcpflow/actors/records"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// artifactDoc is the accepted form of a whole artifact: what
// workflow.artifacts.inspect answers. Kind defaults to "workflow", the
// schemas to the plan's, required_capabilities may be a list or a map
// keyed by "<source>.<capability_key>", and unknown keys are refused.
type artifactDoc struct {
	ID                        string          `json:"id"`
	Version                   int             `json:"version"`
	Title                     string          `json:"title"`
	Kind                      *string         `json:"kind"`
	Description               *string         `json:"description"`
	InputSchema               workflow.Object `json:"input_schema"`
	OutputSchema              workflow.Object `json:"output_schema"`
	Outcomes                  []string        `json:"outcomes"`
	Plan                      workflow.Object `json:"plan"`
	RequiredCapabilities      json.RawMessage `json:"required_capabilities"`
	WorkflowDependencies      map[string]int  `json:"workflow_dependencies"`
	CreatedFromCatalogVersion *string         `json:"created_from_catalog_version"`
}

// saveWholeArtifact answers workflow.artifacts.save. The artifact is
// stored as given (no requirement is inferred), once its plan decodes and
// is structurally sound and its outcomes cover every way the plan ends.
// Artifacts are immutable: saving the same content again is idempotent,
// different content under a saved id and version a ValueError.
func (s *Service) saveWholeArtifact(ctx context.Context, p protocol.SaveArtifactParams) (protocol.SaveArtifactResult, error) {
	a, err := parseArtifact(p.Artifact)
	if err != nil {
		return protocol.SaveArtifactResult{}, err
	}
	if diags := workflow.Blocking(workflow.CheckPlan(a.Plan)); len(diags) > 0 {
		return protocol.SaveArtifactResult{}, invalidPlan(a.Plan.Name, diags)
	}
	if err := checkOutcomes(a.Plan, a.Outcomes); err != nil {
		return protocol.SaveArtifactResult{}, err
	}
	if err := s.saveArtifact(ctx, a); err != nil {
		return protocol.SaveArtifactResult{}, err
	}
	s.recordArtifactSaved(ctx, a, nil)
	return protocol.SaveArtifactResult{ArtifactID: a.ID, Version: a.Version, Saved: true}, nil
}

// parseArtifact decodes a whole artifact strictly: a wrong type, a missing
// key or an unknown key is invalid params, as the reference's model
// validation is.
func parseArtifact(doc protocol.Object) (store.Artifact, error) {
	if doc == nil {
		return store.Artifact{}, invalidParams("invalid params: artifact must be a JSON object")
	}
	var in artifactDoc
	if err := remarshal(doc, &in); err != nil {
		return store.Artifact{}, invalidParams("invalid params: artifact: %v", err)
	}
	if err := checkRecordID("artifact id", in.ID); err != nil {
		return store.Artifact{}, err
	}
	kind := firstNonEmpty(deref(in.Kind), kindWorkflow)
	switch {
	case in.Version < 1:
		return store.Artifact{}, invalidParams("invalid params: artifact version must be 1 or more, not %d", in.Version)
	case in.Title == "":
		return store.Artifact{}, invalidParams("invalid params: artifact title must not be empty")
	case in.Plan == nil:
		return store.Artifact{}, invalidParams("invalid params: artifact plan must be a JSON object")
	case in.Outcomes == nil:
		return store.Artifact{}, invalidParams("invalid params: artifact outcomes are required")
	case kind != kindWorkflow && kind != kindWrapper:
		return store.Artifact{}, invalidParams("invalid params: artifact kind is %q or %q, not %q", kindWorkflow, kindWrapper, kind)
	}
	for child, version := range in.WorkflowDependencies {
		if version < 1 {
			return store.Artifact{}, invalidParams("invalid params: workflow_dependencies[%q] must be a version of 1 or more", child)
		}
	}
	plan, err := decodePlan(in.Plan)
	if err != nil {
		return store.Artifact{}, err
	}
	required, err := records.ParseRequirements(in.RequiredCapabilities)
	if err != nil {
		return store.Artifact{}, recordsErr(err)
	}
	a := store.Artifact{
		ID: in.ID, Version: in.Version, Title: in.Title, Kind: kind, Description: in.Description,
		InputSchema: in.InputSchema, OutputSchema: in.OutputSchema, Outcomes: in.Outcomes, Plan: plan,
		RequiredCapabilities: required, WorkflowDependencies: in.WorkflowDependencies,
		CreatedFromCatalogVersion: in.CreatedFromCatalogVersion,
	}
	if a.InputSchema == nil {
		a.InputSchema = orEmpty(plan.InputSchema)
	}
	if a.OutputSchema == nil {
		a.OutputSchema = orEmpty(plan.OutputSchema)
	}
	if a.WorkflowDependencies == nil {
		a.WorkflowDependencies = map[string]int{}
	}
	return a, nil
}

// deleteArtifact answers workflow.artifacts.delete: a version no
// deployment uses is deleted; one in use is kept, and the answer names the
// deployments that use it.
func (s *Service) deleteArtifact(ctx context.Context, p protocol.InspectArtifactParams) (protocol.DeleteArtifactResult, error) {
	what := fmt.Sprintf("artifact %q version %d", p.ArtifactID, p.Version)
	if _, err := s.Store.GetArtifact(ctx, p.ArtifactID, p.Version); err != nil {
		return protocol.DeleteArtifactResult{}, storeErr(err, what)
	}
	blockers, err := records.DeploymentsUsing(ctx, s.Store, p.ArtifactID, p.Version)
	if err != nil {
		return protocol.DeleteArtifactResult{}, recordsErr(err)
	}
	res := protocol.DeleteArtifactResult{ArtifactID: p.ArtifactID, Version: p.Version, BlockedByDeployments: blockers}
	if len(blockers) > 0 {
		return res, nil
	}
	defer s.recordsChanged() // after the write, whatever its outcome
	deleted, err := s.Store.DeleteArtifact(ctx, p.ArtifactID, p.Version)
	switch {
	case err != nil:
		return protocol.DeleteArtifactResult{}, storeErr(err, what)
	case !deleted:
		return protocol.DeleteArtifactResult{}, notFound("unknown %s", what)
	}
	s.record(ctx, audit.Event{Kind: audit.ArtifactDeleted, CapabilityID: records.CapabilityName(p.ArtifactID, p.Version), WorkflowName: p.ArtifactID,
		Payload: protocol.Object{"artifact_id": p.ArtifactID, "version": p.Version}})
	res.Deleted = true
	return res, nil
}

// deleteDeployment answers workflow.deployments.delete; an unknown id is
// a KeyError. Runs of the deployment keep the environment they pinned.
func (s *Service) deleteDeployment(ctx context.Context, p protocol.DeploymentIDParams) (protocol.DeleteDeploymentResult, error) {
	defer s.recordsChanged() // after the write, whatever its outcome
	deleted, err := s.Store.DeleteDeployment(ctx, p.DeploymentID)
	switch {
	case err != nil:
		return protocol.DeleteDeploymentResult{}, storeErr(err, fmt.Sprintf("deployment %q", p.DeploymentID))
	case !deleted:
		return protocol.DeleteDeploymentResult{}, notFound("unknown deployment %q", p.DeploymentID)
	}
	s.releaseScope(supervisor.DeploymentScope(p.DeploymentID))
	s.record(ctx, audit.Event{Kind: audit.DeploymentDeleted, CapabilityID: "deployment." + p.DeploymentID,
		Payload: protocol.Object{"deployment_id": p.DeploymentID}})
	return protocol.DeleteDeploymentResult{DeploymentID: p.DeploymentID, Deleted: true}, nil
}
