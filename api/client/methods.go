package client

import (
	"context"

	p "github.com/mcpflow/mcpflow/api/protocol"
)

// call is Call with a typed result.
func call[R any](ctx context.Context, c *Client, method string, params any) (R, error) {
	var r R
	err := c.Call(ctx, method, params, &r)
	return r, err
}

// Health checks the service.
func (c *Client) Health(ctx context.Context) (p.HealthResult, error) {
	return call[p.HealthResult](ctx, c, p.MethodHealth, nil)
}

// ListCapabilities pages through planner-visible capabilities.
func (c *Client) ListCapabilities(ctx context.Context, params p.ListCapabilitiesParams) (p.ListCapabilitiesResult, error) {
	return call[p.ListCapabilitiesResult](ctx, c, p.MethodCapabilitiesList, params)
}

// InspectCapability returns one capability's full contract.
func (c *Client) InspectCapability(ctx context.Context, name string) (p.CapabilityDetail, error) {
	return call[p.CapabilityDetail](ctx, c, p.MethodCapabilitiesInspect, p.InspectCapabilityParams{QualifiedName: name})
}

// CreateDraftWorkspaceFromCapability bootstraps a workspace that wraps one
// capability.
func (c *Client) CreateDraftWorkspaceFromCapability(ctx context.Context, params p.CreateFromCapabilityParams) (p.CreateFromCapabilityResult, error) {
	return call[p.CreateFromCapabilityResult](ctx, c, p.MethodWorkspaceFromCapability, params)
}

// GetDraftWorkspace reads a workspace.
func (c *Client) GetDraftWorkspace(ctx context.Context, id string, includeDraft bool) (p.WorkspaceResult, error) {
	return call[p.WorkspaceResult](ctx, c, p.MethodWorkspaceGet, p.GetWorkspaceParams{WorkspaceID: id, IncludeDraft: includeDraft})
}

// CreateArtifactFromWorkspace saves a workspace as an immutable artifact.
func (c *Client) CreateArtifactFromWorkspace(ctx context.Context, params p.CreateArtifactParams) (p.CreateArtifactResult, error) {
	return call[p.CreateArtifactResult](ctx, c, p.MethodWorkspaceCreateArtifact, params)
}

// ListArtifacts pages through saved artifacts.
func (c *Client) ListArtifacts(ctx context.Context, params p.ListArtifactsParams) (p.ListArtifactsResult, error) {
	return call[p.ListArtifactsResult](ctx, c, p.MethodArtifactsList, params)
}

// InspectArtifact reads one artifact version.
func (c *Client) InspectArtifact(ctx context.Context, id string, version int) (p.Artifact, error) {
	return call[p.Artifact](ctx, c, p.MethodArtifactsInspect, p.InspectArtifactParams{ArtifactID: id, Version: version})
}

// SaveDeployment binds an artifact version to concrete sources.
func (c *Client) SaveDeployment(ctx context.Context, deployment p.Object) (p.SaveDeploymentResult, error) {
	return call[p.SaveDeploymentResult](ctx, c, p.MethodDeploymentsSave, p.SaveDeploymentParams{Deployment: deployment})
}

// InspectDeployment reads one deployment.
func (c *Client) InspectDeployment(ctx context.Context, id string) (p.Deployment, error) {
	return call[p.Deployment](ctx, c, p.MethodDeploymentsInspect, p.DeploymentIDParams{DeploymentID: id})
}

// ListDeployments lists deployments.
func (c *Client) ListDeployments(ctx context.Context) (p.ListDeploymentsResult, error) {
	return call[p.ListDeploymentsResult](ctx, c, p.MethodDeploymentsList, nil)
}

// ValidateDeployment checks a deployment's dependencies.
func (c *Client) ValidateDeployment(ctx context.Context, id string, liveCheck bool) (p.ValidateDeploymentResult, error) {
	return call[p.ValidateDeploymentResult](ctx, c, p.MethodDeploymentsValidate, p.ValidateDeploymentParams{DeploymentID: id, LiveCheck: liveCheck})
}

// RunDeployment starts a run and waits for it (up to the server's wait).
func (c *Client) RunDeployment(ctx context.Context, params p.StartRunParams) (p.RunResult, error) {
	return call[p.RunResult](ctx, c, p.MethodRunsStart, params)
}

// InspectRun reads a run.
func (c *Client) InspectRun(ctx context.Context, runID string) (p.RunResult, error) {
	return call[p.RunResult](ctx, c, p.MethodRunsInspect, p.RunIDParams{RunID: runID})
}

// ResumeRun resumes an interrupted run with a payload (and an outcome,
// the interrupt's first when empty).
func (c *Client) ResumeRun(ctx context.Context, params p.ResumeRunParams) (p.RunResult, error) {
	return call[p.RunResult](ctx, c, p.MethodRunsResume, params)
}

// CancelRun ends a running or interrupted run as cancelled (an mcpflow
// extension).
func (c *Client) CancelRun(ctx context.Context, params p.CancelRunParams) (p.RunResult, error) {
	return call[p.RunResult](ctx, c, p.MethodRunsCancel, params)
}

// RerunRun starts a new run of a run's deployment on its input, on its
// artifact version or a newer one (an mcpflow extension).
func (c *Client) RerunRun(ctx context.Context, params p.RerunRunParams) (p.RunResult, error) {
	return call[p.RunResult](ctx, c, p.MethodRunsRerun, params)
}

// ForkRun starts a new run that replays a run's recorded results up to
// params.FromNode and executes from there (an mcpflow extension).
func (c *Client) ForkRun(ctx context.Context, params p.ForkRunParams) (p.RunResult, error) {
	return call[p.RunResult](ctx, c, p.MethodRunsFork, params)
}

// SubscribeRun follows a run (an mcpflow extension): its events after
// params.AfterSequence come as workflow.runs.event notifications (see
// OnNotification), until the one that ends the run.
func (c *Client) SubscribeRun(ctx context.Context, params p.SubscribeRunParams) (p.SubscribeRunResult, error) {
	return call[p.SubscribeRunResult](ctx, c, p.MethodRunsSubscribe, params)
}

// UnsubscribeRun ends a run subscription (an mcpflow extension).
func (c *Client) UnsubscribeRun(ctx context.Context, subscriptionID string) (p.UnsubscribeResult, error) {
	return call[p.UnsubscribeResult](ctx, c, p.MethodRunsUnsubscribe, p.UnsubscribeParams{SubscriptionID: subscriptionID})
}

// SubscribeAdminEvents follows the admin event log (an mcpflow
// extension): its events come as workflow.admin.event notifications.
func (c *Client) SubscribeAdminEvents(ctx context.Context, params p.SubscribeAdminEventsParams) (p.SubscribeAdminEventsResult, error) {
	return call[p.SubscribeAdminEventsResult](ctx, c, p.MethodAdminEventsSubscribe, params)
}

// UnsubscribeAdminEvents ends an admin event subscription (an mcpflow
// extension).
func (c *Client) UnsubscribeAdminEvents(ctx context.Context, subscriptionID string) (p.UnsubscribeResult, error) {
	return call[p.UnsubscribeResult](ctx, c, p.MethodAdminEventsUnsubscribe, p.UnsubscribeParams{SubscriptionID: subscriptionID})
}

// ListRuns pages through runs, newest first.
func (c *Client) ListRuns(ctx context.Context, params p.ListRunsParams) (p.ListRunsResult, error) {
	return call[p.ListRunsResult](ctx, c, p.MethodRunsList, params)
}

// ListConnections lists configured MCP connections.
func (c *Client) ListConnections(ctx context.Context) (p.ListConnectionsResult, error) {
	return call[p.ListConnectionsResult](ctx, c, p.MethodConnectionsList, nil)
}

// GetConnectionStatuses reports each connection's catalog and session.
func (c *Client) GetConnectionStatuses(ctx context.Context) (p.ListConnectionStatusesResult, error) {
	return call[p.ListConnectionStatusesResult](ctx, c, p.MethodConnectionStatusesList, nil)
}

// RefreshConnectionCatalog re-lists a connection's tools through its
// session.
func (c *Client) RefreshConnectionCatalog(ctx context.Context, connectionID string) (p.RefreshCatalogResult, error) {
	return call[p.RefreshCatalogResult](ctx, c, p.MethodConnectionsRefreshCatalog, p.RefreshCatalogParams{ConnectionID: connectionID})
}
