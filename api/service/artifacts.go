package service

import (
	"cmp"
	"context"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/paging"
	"github.com/mcpflow/mcpflow/actors/records"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// artifactMethods are workflow.artifacts.*: list, inspect, save, delete
// and create_from_plan (compile.go).
func (s *Service) artifactMethods() map[string]rpc.Method {
	return map[string]rpc.Method{
		protocol.MethodArtifactsList:           forRead(s.listArtifacts),
		protocol.MethodArtifactsInspect:        forRead(s.inspectArtifact),
		protocol.MethodArtifactsSave:           forAuthor(s.saveWholeArtifact),
		protocol.MethodArtifactsDelete:         forAuthor(s.deleteArtifact),
		protocol.MethodArtifactsCreateFromPlan: forAuthor(s.createFromPlan),
	}
}

const (
	kindWorkflow = records.KindWorkflow
	kindWrapper  = records.KindWrapper
)

func (s *Service) createArtifact(ctx context.Context, p protocol.CreateArtifactParams) (any, error) {
	if err := checkRecordID("artifact_id", p.ArtifactID); err != nil {
		return nil, err
	}
	ws, err := s.Store.GetWorkspace(ctx, p.WorkspaceID)
	if err != nil {
		return nil, storeErr(err, fmt.Sprintf("draft workspace %q", p.WorkspaceID))
	}
	draft, diags := s.checkDraft(ws.Draft)
	if diags = workflow.Blocking(diags); len(diags) > 0 {
		return protocol.UnsavedArtifact{Saved: false, WorkspaceID: ws.ID, Revision: ws.Revision, Status: statusInvalid, Diagnostics: apiDiagnostics(diags)}, nil
	}
	plan, err := workflow.Compile(draft)
	if err != nil {
		return nil, invalid("%v", err)
	}
	a, err := s.saveFromPlan(ctx, records.Header{
		ID: p.ArtifactID, Version: p.Version, Title: p.Title, Kind: deref(p.Kind), Description: p.Description, Outcomes: p.Outcomes,
		SourceBindings: p.SourceBindings, RequiredCapabilities: p.RequiredCapabilities, CreatedFromCatalogVersion: p.CreatedFromCatalogVersion,
	}, plan)
	if err != nil {
		return nil, err
	}
	s.recordArtifactSaved(ctx, a, protocol.Object{"created_from_draft": true})
	logical := records.LogicalSources(a.RequiredCapabilities)
	return protocol.SavedArtifact{ArtifactID: a.ID, Version: a.Version, Saved: true, RequiredLogicalSources: logical,
		SuggestedBindings: records.SuggestedBindings(logical, s.isEnabledConnection)}, nil
}

// saveFromPlan makes and saves the artifact of plan (records.FromPlan),
// its requirements observed in the live catalog.
func (s *Service) saveFromPlan(ctx context.Context, h records.Header, plan workflow.Plan) (store.Artifact, error) {
	a, err := records.FromPlan(ctx, s.Store, h, plan, s.observed(s.findCapability))
	return a, recordsErr(err)
}

// observed is what the artifact rules observe the catalog through: find,
// the effective connections and the clock.
func (s *Service) observed(find workflow.Lookup) records.Observed {
	return records.Observed{Find: find, IsConnection: s.isConnection, Now: s.now}
}

// requirements records what the plan depends on (records.Requirements),
// observed in the live catalog through find.
func (s *Service) requirements(plan workflow.Plan, bindings map[string]string, explicit map[string]protocol.Object, find workflow.Lookup) ([]store.RequiredCapability, error) {
	reqs, err := records.Requirements(plan, bindings, explicit, s.observed(find))
	return reqs, recordsErr(err)
}

// saveWholeArtifact answers workflow.artifacts.save. The artifact is
// stored as given (no requirement is inferred), once its plan decodes and
// is structurally sound and its outcomes cover every way the plan ends.
// Artifacts are immutable: saving the same content again is idempotent,
// different content under a saved id and version a ValueError.
func (s *Service) saveWholeArtifact(ctx context.Context, p protocol.SaveArtifactParams) (protocol.SaveArtifactResult, error) {
	a, err := records.ParseArtifact(p.Artifact)
	if err != nil {
		return protocol.SaveArtifactResult{}, authoringErr(recordsErr(err))
	}
	if diags := workflow.Blocking(workflow.CheckPlan(a.Plan)); len(diags) > 0 {
		return protocol.SaveArtifactResult{}, invalidPlan(a.Plan.Name, diags)
	}
	if err := recordsErr(records.CheckOutcomes(a.Plan, a.Outcomes)); err != nil {
		return protocol.SaveArtifactResult{}, err
	}
	if err := recordsErr(records.Save(ctx, s.Store, a)); err != nil {
		return protocol.SaveArtifactResult{}, err
	}
	s.recordArtifactSaved(ctx, a, nil)
	return protocol.SaveArtifactResult{ArtifactID: a.ID, Version: a.Version, Saved: true}, nil
}

// deleteArtifact answers workflow.artifacts.delete (records.Delete): a
// version no deployment uses is deleted; one in use is kept, and the
// answer names the deployments that use it.
func (s *Service) deleteArtifact(ctx context.Context, p protocol.InspectArtifactParams) (protocol.DeleteArtifactResult, error) {
	blockers, written, err := records.Delete(ctx, s.Store, p.ArtifactID, p.Version)
	if written {
		defer s.recordsChanged() // after the write, whatever its outcome
	}
	res := protocol.DeleteArtifactResult{ArtifactID: p.ArtifactID, Version: p.Version, BlockedByDeployments: blockers}
	switch {
	case err != nil:
		return protocol.DeleteArtifactResult{}, recordsErr(err)
	case len(blockers) > 0:
		return res, nil
	}
	s.record(ctx, audit.Event{Kind: audit.ArtifactDeleted, CapabilityID: records.CapabilityName(p.ArtifactID, p.Version), WorkflowName: p.ArtifactID,
		Payload: protocol.Object{"artifact_id": p.ArtifactID, "version": p.Version}})
	res.Deleted = true
	return res, nil
}

func (s *Service) listArtifacts(ctx context.Context, p protocol.ListArtifactsParams) (protocol.ListArtifactsResult, error) {
	offset, limit, err := pageParams(p.Cursor, p.Limit, 50)
	if err != nil {
		return protocol.ListArtifactsResult{}, err
	}
	arts, total, err := s.Store.ListArtifacts(ctx, store.ArtifactQuery{Query: deref(p.Query), Kind: deref(p.Kind), Offset: offset, Limit: limit})
	if err != nil {
		return protocol.ListArtifactsResult{}, storeErr(err, "artifacts")
	}
	nodes := make([]protocol.ArtifactEntry, 0, len(arts))
	for _, a := range arts {
		nodes = append(nodes, protocol.ArtifactEntry{
			Name: fmt.Sprintf("workflow.%s.v%d", a.ID, a.Version), ArtifactID: a.ID, Version: a.Version, Kind: a.Kind,
			DisplayName: a.Title, Description: a.Description, Outcomes: a.Outcomes, InputSchema: a.InputSchema,
			OutputSchema: a.OutputSchema, RequiredSources: records.LogicalSources(a.RequiredCapabilities), Diagnostics: []protocol.DependencyDiag{},
		})
	}
	return protocol.ListArtifactsResult{Nodes: nodes, NextCursor: paging.Next(offset+len(arts), total), Total: total}, nil
}

func (s *Service) inspectArtifact(ctx context.Context, p protocol.InspectArtifactParams) (protocol.Artifact, error) {
	a, err := s.Store.GetArtifact(ctx, p.ArtifactID, p.Version)
	if err != nil {
		return protocol.Artifact{}, storeErr(err, fmt.Sprintf("artifact %q version %d", p.ArtifactID, p.Version))
	}
	return apiArtifact(a)
}

func orEmpty(o workflow.Object) workflow.Object {
	if o == nil {
		return workflow.Object{}
	}
	return o
}

func firstNonEmpty(values ...string) string {
	return cmp.Or(values...)
}
