package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// deploymentMethods are workflow.deployments.*: save, inspect, list,
// validate and delete.
func (s *Service) deploymentMethods() map[string]rpc.Method {
	return map[string]rpc.Method{
		protocol.MethodDeploymentsSave:     forAuthor(s.saveDeployment),
		protocol.MethodDeploymentsInspect:  forRead(s.inspectDeployment),
		protocol.MethodDeploymentsList:     forRead(s.listDeployments),
		protocol.MethodDeploymentsValidate: forRead(s.validateDeployment),
		protocol.MethodDeploymentsDelete:   forAuthor(s.deleteDeployment),
	}
}

// deploymentDoc is the accepted input form of a deployment: "id" or
// "deployment_id", bindings as a list or a {logical: concrete} map.
type deploymentDoc struct {
	ID              string             `json:"id"`
	DeploymentID    string             `json:"deployment_id"`
	ArtifactID      string             `json:"artifact_id"`
	ArtifactVersion int                `json:"artifact_version"`
	Bindings        json.RawMessage    `json:"bindings"`
	DriftPolicy     string             `json:"drift_policy"`
	Limits          *store.RunLimits   `json:"limits"`
	Retention       *store.Retention   `json:"retention"`
	MCP             *store.MCPExposure `json:"mcp"`
}

func parseDeployment(doc protocol.Object) (store.Deployment, error) {
	var in deploymentDoc
	if err := remarshal(doc, &in); err != nil {
		return store.Deployment{}, invalidParams("invalid params: deployment: %v", err)
	}
	d := store.Deployment{ID: in.ID, ArtifactID: in.ArtifactID, ArtifactVersion: in.ArtifactVersion, DriftPolicy: in.DriftPolicy, Limits: in.Limits, Retention: in.Retention, MCP: in.MCP}
	if l := in.Limits; l != nil && (l.MaxSteps != nil && *l.MaxSteps < 1 || l.RunTimeoutSeconds != nil && *l.RunTimeoutSeconds < 1) {
		return d, invalidParams("invalid params: deployment limits: max_steps and run_timeout_seconds are at least 1")
	}
	if r := in.Retention; r != nil && r.FinishedSeconds != nil && *r.FinishedSeconds < 0 {
		return d, invalidParams("invalid params: deployment retention: finished_seconds is at least 0 (0 keeps the runs for ever)")
	}
	switch {
	case in.ID != "" && in.DeploymentID != "":
		return d, invalidParams("invalid params: deployment: give id or deployment_id, not both")
	case in.ID == "":
		d.ID = in.DeploymentID
	}
	if err := checkRecordID("deployment id", d.ID); err != nil {
		return d, err
	}
	if in.ArtifactID == "" || in.ArtifactVersion < 1 {
		return d, invalidParams("invalid params: deployment needs artifact_id and artifact_version >= 1")
	}
	switch d.DriftPolicy {
	case "":
		d.DriftPolicy = "block"
	case "block", "warn", "allow":
	default:
		return d, invalidParams("invalid params: drift_policy must be block, warn or allow, got %q", d.DriftPolicy)
	}
	bindings, err := parseBindings(in.Bindings)
	if err != nil {
		return d, err
	}
	d.Bindings = bindings
	return d, nil
}

// parseBindings accepts a list of {logical_source, concrete_source} or a
// {logical: concrete} map; duplicate logical sources are rejected.
func parseBindings(raw json.RawMessage) ([]store.Binding, error) {
	var list []store.Binding
	trimmed := bytes.TrimSpace(raw)
	switch {
	case len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")):
	case trimmed[0] == '{':
		var m map[string]string
		if err := json.Unmarshal(trimmed, &m); err != nil {
			return nil, invalidParams("invalid params: deployment bindings: %v", err)
		}
		for logical, concrete := range m {
			list = append(list, store.Binding{LogicalSource: logical, ConcreteSource: concrete})
		}
		sort.Slice(list, func(i, j int) bool { return list[i].LogicalSource < list[j].LogicalSource })
	default:
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&list); err != nil {
			return nil, invalidParams("invalid params: deployment bindings: %v", err)
		}
	}
	seen := map[string]bool{}
	sessions := map[string]string{} // by concrete source
	for _, b := range list {
		if b.LogicalSource == "" || b.ConcreteSource == "" {
			return nil, invalidParams("invalid params: a binding needs logical_source and concrete_source")
		}
		if seen[b.LogicalSource] {
			return nil, invalidParams("invalid params: logical source %q is bound twice", b.LogicalSource)
		}
		seen[b.LogicalSource] = true
		session := sessionOf(b)
		switch session {
		case store.SessionShared, store.SessionDeployment, store.SessionRun:
		default:
			return nil, invalidParams("invalid params: binding of logical source %q: session must be shared, deployment or run, got %q", b.LogicalSource, b.Session)
		}
		if other, ok := sessions[b.ConcreteSource]; ok && other != session {
			return nil, invalidParams("invalid params: connection %q is bound with session %q and %q; the bindings of one connection must ask for the same session", b.ConcreteSource, other, session)
		}
		sessions[b.ConcreteSource] = session
	}
	if list == nil {
		list = []store.Binding{}
	}
	return list, nil
}

// sessionOf is the session scope a binding asks for; absent is shared.
func sessionOf(b store.Binding) string {
	if b.Session == "" {
		return store.SessionShared
	}
	return b.Session
}

func (s *Service) saveDeployment(ctx context.Context, p protocol.SaveDeploymentParams) (protocol.SaveDeploymentResult, error) {
	d, err := parseDeployment(p.Deployment)
	if err != nil {
		return protocol.SaveDeploymentResult{}, err
	}
	if _, err := s.Store.GetArtifact(ctx, d.ArtifactID, d.ArtifactVersion); err != nil {
		return protocol.SaveDeploymentResult{}, storeErr(err, fmt.Sprintf("artifact %q version %d", d.ArtifactID, d.ArtifactVersion))
	}
	old, oldErr := s.Store.GetDeployment(ctx, d.ID)
	defer s.recordsChanged() // after the write, whatever its outcome
	if err := s.Store.SaveDeployment(ctx, d); err != nil {
		return protocol.SaveDeploymentResult{}, storeErr(err, fmt.Sprintf("deployment %q", d.ID))
	}
	if oldErr == nil && !slices.Equal(old.Bindings, d.Bindings) && slices.ContainsFunc(old.Bindings, func(b store.Binding) bool { return b.Session == store.SessionDeployment }) {
		// Its sessions were opened for other bindings: the next run
		// opens fresh ones.
		s.releaseScope(supervisor.DeploymentScope(d.ID))
	}
	s.recordDeploymentSaved(ctx, d)
	return protocol.SaveDeploymentResult{DeploymentID: d.ID, ArtifactID: d.ArtifactID, ArtifactVersion: d.ArtifactVersion, Saved: true}, nil
}

func (s *Service) inspectDeployment(ctx context.Context, p protocol.DeploymentIDParams) (protocol.Deployment, error) {
	d, err := s.Store.GetDeployment(ctx, p.DeploymentID)
	if err != nil {
		return protocol.Deployment{}, storeErr(err, fmt.Sprintf("deployment %q", p.DeploymentID))
	}
	return apiDeployment(d), nil
}

func (s *Service) listDeployments(ctx context.Context, _ protocol.Empty) (protocol.ListDeploymentsResult, error) {
	ds, err := s.Store.ListDeployments(ctx)
	if err != nil {
		return protocol.ListDeploymentsResult{}, storeErr(err, "deployments")
	}
	out := make([]protocol.DeploymentSummary, 0, len(ds))
	for _, d := range ds {
		out = append(out, protocol.DeploymentSummary{ID: d.ID, ArtifactID: d.ArtifactID, ArtifactVersion: d.ArtifactVersion, BindingCount: len(d.Bindings), DriftPolicy: d.DriftPolicy})
	}
	return protocol.ListDeploymentsResult{Deployments: out}, nil
}

func (s *Service) validateDeployment(ctx context.Context, p protocol.ValidateDeploymentParams) (protocol.ValidateDeploymentResult, error) {
	d, a, err := s.manager().Deployment(ctx, p.DeploymentID)
	if err != nil {
		return protocol.ValidateDeploymentResult{}, runsErr(err)
	}
	diags := s.checkDependencies(d, a)
	if p.LiveCheck {
		diags = append(diags, s.liveCheck(ctx, d, a)...)
	}
	status, next := "runnable", nextActions(true, nil, ptr(protocol.MethodRunsStart), "The deployment's dependencies resolve; run it.", nil)
	if first, failed := firstError(diags); failed {
		status = "unrunnable"
		next = nextActions(true, nil, ptr(protocol.MethodDeploymentsValidate), "Fix the error diagnostics ("+first.Code+"), then validate again.", nil)
	}
	return protocol.ValidateDeploymentResult{
		DeploymentID: d.ID, ArtifactID: d.ArtifactID, ArtifactVersion: d.ArtifactVersion,
		Status: status, Diagnostics: diags, NextActions: next,
	}, nil
}

// releaseScope closes the sessions of scope (a deployment's, a run's),
// without waiting.
func (s *Service) releaseScope(scope string) {
	if s.Supervisor != nil {
		s.Supervisor.ReleaseScope(scope)
	}
}

// checkDependencies validates an artifact's requirements against the
// deployment's bindings and the live catalogs, as the run manager does
// before a run starts (runs.Manager.Dependencies).
func (s *Service) checkDependencies(d store.Deployment, a store.Artifact) []protocol.DependencyDiag {
	return dependencyDiags(s.manager().Dependencies(d, a))
}

func diagError(code, ref string, bound *string, message, hint string) protocol.DependencyDiag {
	return protocol.DependencyDiag{Severity: "error", Code: code, LogicalRef: ref, BoundSource: bound, Message: message, RepairHint: &hint}
}

// firstError is the first error-severity diagnostic, if any.
func firstError(diags []protocol.DependencyDiag) (protocol.DependencyDiag, bool) {
	for _, d := range diags {
		if d.Severity == "error" {
			return d, true
		}
	}
	return protocol.DependencyDiag{}, false
}
