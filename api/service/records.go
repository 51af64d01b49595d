package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"

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

// capabilityKinds are the kinds a required capability may have.
var capabilityKinds = map[string]bool{"tool": true, "resource": true, "prompt": true, kindNodeSpec: true, "reducer": true, "workflow": true}

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
	required, err := parseRequirements(in.RequiredCapabilities)
	if err != nil {
		return store.Artifact{}, err
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

// parseRequirements decodes required capabilities given as a list or as a
// map keyed by name (in name order); a capability required twice is
// refused.
func parseRequirements(raw json.RawMessage) ([]store.RequiredCapability, error) {
	trimmed := bytes.TrimSpace(raw)
	var names []string
	var docs []protocol.Object
	switch {
	case len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")):
		return []store.RequiredCapability{}, nil
	case trimmed[0] == '{':
		var byName map[string]protocol.Object
		if err := json.Unmarshal(trimmed, &byName); err != nil {
			return nil, invalidParams("invalid params: artifact required_capabilities: %v", err)
		}
		for name := range byName {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			docs = append(docs, byName[name])
		}
	default:
		if err := json.Unmarshal(trimmed, &docs); err != nil {
			return nil, invalidParams("invalid params: artifact required_capabilities: %v", err)
		}
		for i := range docs {
			names = append(names, fmt.Sprint(i))
		}
	}
	out := make([]store.RequiredCapability, 0, len(docs))
	seen := map[store.CapabilityRef]bool{}
	for i, doc := range docs {
		var r store.RequiredCapability
		if err := remarshal(doc, &r); err != nil {
			return nil, invalidParams("invalid params: artifact required_capabilities[%s]: %v", names[i], err)
		}
		if r.Kind == "" {
			r.Kind = kindNodeSpec
		}
		switch {
		case r.Ref.Source == "" || r.Ref.CapabilityKey == "":
			return nil, invalidParams("invalid params: artifact required_capabilities[%s] needs ref.source and ref.capability_key", names[i])
		case !capabilityKinds[r.Kind]:
			return nil, invalidParams("invalid params: artifact required_capabilities[%s] has unknown kind %q", names[i], r.Kind)
		case seen[r.Ref]:
			return nil, invalidParams("invalid params: capability %s.%s is required twice", r.Ref.Source, r.Ref.CapabilityKey)
		}
		seen[r.Ref] = true
		out = append(out, r)
	}
	return out, nil
}

// deleteArtifact answers workflow.artifacts.delete: a version no
// deployment uses is deleted; one in use is kept, and the answer names the
// deployments that use it.
func (s *Service) deleteArtifact(ctx context.Context, p protocol.InspectArtifactParams) (protocol.DeleteArtifactResult, error) {
	what := fmt.Sprintf("artifact %q version %d", p.ArtifactID, p.Version)
	if _, err := s.Store.GetArtifact(ctx, p.ArtifactID, p.Version); err != nil {
		return protocol.DeleteArtifactResult{}, storeErr(err, what)
	}
	blockers, err := s.deploymentsUsing(ctx, p.ArtifactID, p.Version)
	if err != nil {
		return protocol.DeleteArtifactResult{}, err
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
	s.record(ctx, audit.Event{Kind: audit.ArtifactDeleted, CapabilityID: artifactCapability(p.ArtifactID, p.Version), WorkflowName: p.ArtifactID,
		Payload: protocol.Object{"artifact_id": p.ArtifactID, "version": p.Version}})
	res.Deleted = true
	return res, nil
}

// deploymentsUsing lists, sorted, the deployments that pin artifact
// id@version: directly, or as a subgraph anywhere under the artifact they
// pin (a run of theirs would load it).
func (s *Service) deploymentsUsing(ctx context.Context, id string, version int) ([]string, error) {
	ds, err := s.Store.ListDeployments(ctx)
	if err != nil {
		return nil, storeErr(err, "deployments")
	}
	target := workflow.WorkflowRef{ArtifactID: &id, Version: &version}.Key()
	tree := subgraphIndex{s: s, uses: map[string]bool{}}
	out := []string{}
	for _, d := range ds {
		if d.ArtifactID == id && d.ArtifactVersion == version || tree.reaches(ctx, d.ArtifactID, d.ArtifactVersion, target) {
			out = append(out, d.ID)
		}
	}
	sort.Strings(out)
	return out, nil
}

// subgraphIndex answers whether an artifact's subgraph tree reaches a
// target, loading each artifact once. A child that cannot be loaded
// reaches nothing.
type subgraphIndex struct {
	s *Service
	// uses maps "id@version" to whether its tree reaches the target;
	// an entry under evaluation is false, which also ends a cycle.
	uses map[string]bool
}

func (x subgraphIndex) reaches(ctx context.Context, id string, version int, target string) bool {
	key := workflow.WorkflowRef{ArtifactID: &id, Version: &version}.Key()
	if found, done := x.uses[key]; done {
		return found
	}
	x.uses[key] = false
	a, err := x.s.Store.GetArtifact(ctx, id, version)
	if err != nil {
		return false
	}
	for _, ref := range a.Plan.Subgraphs() {
		if ref.ArtifactID == nil || ref.Version == nil {
			continue
		}
		if ref.Key() == target || x.reaches(ctx, *ref.ArtifactID, *ref.Version, target) {
			x.uses[key] = true
			return true
		}
	}
	return false
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

// artifactCapability is the capability name of an artifact version,
// "workflow.<id>.v<version>".
func artifactCapability(id string, version int) string {
	return fmt.Sprintf("workflow.%s.v%d", id, version)
}
