package service

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/mcpflow/mcpflow/actors/catalog"
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
	kindWorkflow = "workflow"
	kindWrapper  = "wrapper"
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
	if err := checkOutcomes(plan, p.Outcomes); err != nil {
		return nil, err
	}
	rewriteToLogical(&plan, p.SourceBindings)
	required, err := s.requirements(plan, p.SourceBindings, p.RequiredCapabilities, s.findCapability)
	if err != nil {
		return nil, err
	}
	kind := deref(p.Kind)
	if kind == "" {
		kind = kindWorkflow
	}
	a := store.Artifact{
		ID: p.ArtifactID, Version: p.Version, Title: p.Title, Kind: kind, Description: p.Description,
		InputSchema: orEmpty(plan.InputSchema), OutputSchema: orEmpty(plan.OutputSchema), Outcomes: p.Outcomes,
		Plan: plan, RequiredCapabilities: required, WorkflowDependencies: map[string]int{},
		CreatedFromCatalogVersion: p.CreatedFromCatalogVersion,
	}
	if err := s.saveArtifact(ctx, a); err != nil {
		return nil, err
	}
	s.recordArtifactSaved(ctx, a, protocol.Object{"created_from_draft": true})
	logical := logicalSources(required)
	suggested := map[string]string{}
	for _, src := range logical {
		if conn, ok := s.connection(src); ok && conn.IsEnabled() {
			suggested[src] = src
		}
	}
	return protocol.SavedArtifact{ArtifactID: a.ID, Version: a.Version, Saved: true, RequiredLogicalSources: logical, SuggestedBindings: suggested}, nil
}

// saveArtifact stores a. When its id+version exists, the save is
// idempotent if the two differ only in when the catalog was observed
// (ObservedAtEpochMs): that is the same content saved again.
func (s *Service) saveArtifact(ctx context.Context, a store.Artifact) error {
	_, err := s.Store.SaveArtifact(ctx, a)
	if errors.Is(err, store.ErrConflict) {
		if saved, getErr := s.Store.GetArtifact(ctx, a.ID, a.Version); getErr == nil && len(saved.RequiredCapabilities) == len(a.RequiredCapabilities) {
			again := a
			again.RequiredCapabilities = append([]store.RequiredCapability(nil), a.RequiredCapabilities...)
			for i := range again.RequiredCapabilities {
				again.RequiredCapabilities[i].ObservedAtEpochMs = saved.RequiredCapabilities[i].ObservedAtEpochMs
			}
			_, err = s.Store.SaveArtifact(ctx, again)
		}
	}
	switch {
	case errors.Is(err, store.ErrConflict):
		return invalid("artifact %q version %d already exists with different content; artifacts are immutable, save a new version", a.ID, a.Version)
	case err != nil:
		return storeErr(err, fmt.Sprintf("artifact %q version %d", a.ID, a.Version))
	}
	return nil
}

// checkOutcomes requires every outcome the plan can finish with to be
// declared, and the declared ones to be unique and non-blank.
func checkOutcomes(plan workflow.Plan, declared []string) error {
	set := map[string]bool{}
	for _, o := range declared {
		if strings.TrimSpace(o) == "" || set[o] {
			return invalidParams("invalid params: outcomes must be unique and non-blank")
		}
		set[o] = true
	}
	if len(set) == 0 {
		return invalidParams("invalid params: outcomes must not be empty")
	}
	for _, e := range plan.Edges {
		// A route to the end finishes the workflow with outcome ok.
		if e.To == workflow.End && !set[workflow.OutcomeOK] {
			return invalid("step %q finishes the workflow with outcome %q, which outcomes does not declare", e.From, workflow.OutcomeOK)
		}
	}
	for _, n := range plan.Nodes {
		if n.Type == workflow.NodeEnd && !set[firstNonEmpty(n.Outcome, workflow.OutcomeOK)] {
			return invalid("end step %q finishes with outcome %q, which outcomes does not declare", n.ID, n.Outcome)
		}
	}
	return nil
}

// rewriteToLogical renames node refs "<concrete>.<tool>" to
// "<logical>.<tool>" for bindings {logical: concrete}; the longest concrete
// match wins.
func rewriteToLogical(plan *workflow.Plan, bindings map[string]string) {
	logicals := make([]string, 0, len(bindings))
	for logical := range bindings {
		logicals = append(logicals, logical)
	}
	sort.Strings(logicals) // ties between logical names bound to one connection: the first name wins
	for i, n := range plan.Nodes {
		best := ""
		for _, logical := range logicals {
			concrete := bindings[logical]
			if strings.HasPrefix(n.Node, concrete+".") && len(concrete) > len(bindings[best]) {
				best = logical
			}
		}
		if best != "" {
			plan.Nodes[i].Node = best + strings.TrimPrefix(n.Node, bindings[best])
		}
	}
}

// requirements records what the plan depends on: explicit ones when given,
// else one node_spec requirement per non-platform capability, with the
// schemas and hashes observed in the live catalog.
func (s *Service) requirements(plan workflow.Plan, bindings map[string]string, explicit map[string]protocol.Object, find workflow.Lookup) ([]store.RequiredCapability, error) {
	if explicit != nil {
		return explicitRequirements(explicit)
	}
	out := []store.RequiredCapability{}
	for _, name := range plan.Capabilities() {
		if _, ok := workflow.Builtin(name); ok {
			continue
		}
		source, local, ok := catalog.SplitName(name, func(src string) bool { return bindings[src] != "" || s.isConnection(src) })
		if !ok {
			i := strings.LastIndex(name, ".")
			source, local = name[:max(i, 0)], name[i+1:]
		}
		concrete := firstNonEmpty(bindings[source], source)
		req := store.RequiredCapability{Ref: store.CapabilityRef{Source: source, CapabilityKey: local}, Kind: kindNodeSpec}
		if c, ok := find(concrete + "." + local); ok {
			inHash, err := catalog.SchemaHash(c.InputSchema)
			if err != nil {
				return nil, err
			}
			outHash, err := catalog.SchemaHash(c.OutputSchema)
			if err != nil {
				return nil, err
			}
			now := s.now().UnixMilli()
			req.InputSchemaHash, req.InputSchemaSnapshot = &inHash, c.InputSchema
			req.OutputSchemaHash, req.OutputSchemaSnapshot = &outHash, c.OutputSchema
			req.ObservedConcreteSource, req.ObservedAtEpochMs = &concrete, &now
		}
		out = append(out, req)
	}
	return out, nil
}

// explicitRequirements decodes caller-given requirements keyed by name.
func explicitRequirements(explicit map[string]protocol.Object) ([]store.RequiredCapability, error) {
	keys := make([]string, 0, len(explicit))
	for k := range explicit {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]store.RequiredCapability, 0, len(keys))
	for _, k := range keys {
		var req store.RequiredCapability
		if err := remarshal(explicit[k], &req); err != nil || req.Ref.Source == "" || req.Ref.CapabilityKey == "" {
			return nil, invalidParams("invalid params: required_capabilities[%q] needs ref.source and ref.capability_key", k)
		}
		if req.Kind == "" {
			req.Kind = kindNodeSpec
		}
		out = append(out, req)
	}
	return out, nil
}

func logicalSources(reqs []store.RequiredCapability) []string {
	set := map[string]bool{}
	for _, r := range reqs {
		if r.Ref.Source != workflow.PlatformSource {
			set[r.Ref.Source] = true
		}
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func (s *Service) listArtifacts(ctx context.Context, p protocol.ListArtifactsParams) (protocol.ListArtifactsResult, error) {
	offset, limit, err := paging(p.Cursor, p.Limit, 50)
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
			OutputSchema: a.OutputSchema, RequiredSources: logicalSources(a.RequiredCapabilities), Diagnostics: []protocol.DependencyDiag{},
		})
	}
	return protocol.ListArtifactsResult{Nodes: nodes, NextCursor: nextCursor(offset+len(arts), total), Total: total}, nil
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

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
