package audit

import (
	"regexp"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/store"
)

// ArtifactSavedEvent is workflow_artifact_saved for a; how tells how it
// was made (created_from_plan, created_from_draft), if not given whole.
func ArtifactSavedEvent(a store.Artifact, capability string, how map[string]any) Event {
	payload := map[string]any{"artifact_id": a.ID, "version": a.Version, "kind": a.Kind}
	for k, v := range how {
		payload[k] = v
	}
	return Event{Kind: ArtifactSaved, CapabilityID: capability, WorkflowName: a.ID, Payload: payload}
}

// DeploymentSavedEvent is workflow_deployment_saved for d.
func DeploymentSavedEvent(d store.Deployment) Event {
	return Event{Kind: DeploymentSaved, CapabilityID: "deployment." + d.ID, WorkflowName: d.ArtifactID,
		Payload: map[string]any{"deployment_id": d.ID, "artifact_id": d.ArtifactID, "artifact_version": d.ArtifactVersion, "binding_count": len(d.Bindings)}}
}

// RefreshStartedEvent is catalog_refresh_started for a connection.
func RefreshStartedEvent(connectionID string) Event {
	return Event{Kind: CatalogRefreshStarted, ConnectionID: connectionID, Payload: map[string]any{"connection_id": connectionID}}
}

// RefreshEndedEvent is catalog_refresh_failed, when err is not nil, or
// catalog_refresh_completed with what the catalog after it holds (what
// changed is recorded by the catalog sink).
func RefreshEndedEvent(connectionID string, after catalog.Snapshot, err error) Event {
	if err != nil {
		return Event{Kind: CatalogRefreshFailed, ConnectionID: connectionID,
			Payload: map[string]any{"connection_id": connectionID, "error": RedactURLQueries(err.Error())}}
	}
	return Event{Kind: CatalogRefreshCompleted, ConnectionID: connectionID, Payload: map[string]any{
		"connection_id": connectionID, "fetched_at_epoch_ms": after.FetchedAtEpochMs,
		"node_count": len(after.Tools), "resource_count": len(after.Resources), "prompt_count": len(after.Prompts),
	}}
}

// urlQuery matches the query of a URL in a message.
var urlQuery = regexp.MustCompile(`(?i)(\b[a-z][a-z0-9+.-]*://[^\s?#"'<>]*)\?[^\s#"'<>]*`)

// RedactURLQueries removes URL queries from a message that leaves the
// server (an event, a call diagnostic): a query may carry a key or token.
func RedactURLQueries(msg string) string {
	return urlQuery.ReplaceAllString(msg, "$1?[redacted]")
}
