package service

import (
	"context"
	"errors"

	"github.com/mcpflow/mcpflow/actors/records"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/mcpface"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// deploymentChange answers a dry run of workflow.deployments.save (an
// extension): nothing is saved; the answer says which artifact version
// the deployment runs now (none for a new one) and would run, and the
// tool description agents would see before and after.
func (s *Service) deploymentChange(ctx context.Context, doc protocol.Object) (protocol.SaveDeploymentResult, error) {
	next, err := records.ParseDeployment(doc)
	if err != nil {
		return protocol.SaveDeploymentResult{}, recordsErr(err)
	}
	nextVersion, err := s.deploymentVersion(ctx, next)
	if err != nil {
		return protocol.SaveDeploymentResult{}, err
	}
	change := &protocol.DeploymentChange{Next: nextVersion}
	switch prev, err := s.Store.GetDeployment(ctx, next.ID); {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return protocol.SaveDeploymentResult{}, storeErr(err, "deployment "+next.ID)
	default:
		v, err := s.deploymentVersion(ctx, prev)
		if err != nil {
			return protocol.SaveDeploymentResult{}, err
		}
		change.Previous = &v
	}
	return protocol.SaveDeploymentResult{DeploymentID: next.ID, ArtifactID: next.ArtifactID, ArtifactVersion: next.ArtifactVersion, Change: change}, nil
}

// deploymentVersion is d's artifact version and its tool's description.
func (s *Service) deploymentVersion(ctx context.Context, d store.Deployment) (protocol.DeploymentVersion, error) {
	stored, err := s.Store.GetArtifact(ctx, d.ArtifactID, d.ArtifactVersion)
	if err != nil {
		return protocol.DeploymentVersion{}, storeErr(err, "artifact "+d.ArtifactID)
	}
	a, err := apiArtifact(stored)
	if err != nil {
		return protocol.DeploymentVersion{}, err
	}
	desc, err := mcpface.Describe(apiDeployment(d), a)
	if err != nil {
		return protocol.DeploymentVersion{}, upstream("describe the tool of %s: %v", d.ID, err)
	}
	return protocol.DeploymentVersion{ArtifactID: d.ArtifactID, ArtifactVersion: d.ArtifactVersion, ToolDescription: desc}, nil
}
