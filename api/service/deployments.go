package service

import (
	"context"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/records"
	"github.com/mcpflow/mcpflow/actors/runs"
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

func (s *Service) saveDeployment(ctx context.Context, p protocol.SaveDeploymentParams) (protocol.SaveDeploymentResult, error) {
	if p.DryRun {
		return s.deploymentChange(ctx, p.Deployment)
	}
	saved, err := records.SaveDeployment(ctx, s.Store, p.Deployment, s.Runs.StepCeiling())
	if saved.Written {
		defer s.recordsChanged() // after the write, whatever its outcome
	}
	if err != nil {
		return protocol.SaveDeploymentResult{}, recordsErr(err)
	}
	d := saved.Deployment
	if saved.Rebound {
		s.releaseScope(supervisor.DeploymentScope(d.ID))
	}
	s.record(ctx, audit.DeploymentSavedEvent(d))
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
	d, a, err := s.Runs.Deployment(ctx, p.DeploymentID)
	if err != nil {
		return protocol.ValidateDeploymentResult{}, runsErr(err)
	}
	diags := append(s.Runs.Dependencies(d, a), runs.PlanWarnings(a)...)
	bound := map[string]string{}
	for _, b := range d.Bindings {
		bound[b.LogicalSource] = b.ConcreteSource
	}
	diags = append(diags, s.sessionDiags(ctx, bound)...)
	if p.LiveCheck {
		diags = append(diags, s.Runs.LiveCheck(ctx, d, a)...)
	}
	status, next := "runnable", nextActions(true, nil, ptr(protocol.MethodRunsStart), "The deployment's dependencies resolve; run it.", nil)
	if first, failed := runs.FirstError(diags); failed {
		status = "unrunnable"
		next = nextActions(true, nil, ptr(protocol.MethodDeploymentsValidate), "Fix the error diagnostics ("+first.Code+"), then validate again.", nil)
	}
	return protocol.ValidateDeploymentResult{
		DeploymentID: d.ID, ArtifactID: d.ArtifactID, ArtifactVersion: d.ArtifactVersion,
		Status: status, Diagnostics: dependencyDiags(diags), NextActions: next,
	}, nil
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

// releaseScope closes the sessions of scope (a deployment's, a run's),
// without waiting.
func (s *Service) releaseScope(scope string) {
	if s.Supervisor != nil {
		s.Supervisor.ReleaseScope(scope)
	}
}
