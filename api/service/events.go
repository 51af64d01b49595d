package service

import (
	"context"
	"regexp"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/records"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/live"
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// eventMethods are workflow.admin.events.*: the admin event log, listed,
// and followed live (live.go).
func (s *Service) eventMethods() map[string]rpc.Method {
	return map[string]rpc.Method{
		protocol.MethodAdminEventsList:        forAdmin(s.listEvents),
		protocol.MethodAdminEventsSubscribe:   forAdmin(s.subscribeAdminEvents),
		protocol.MethodAdminEventsUnsubscribe: forAdmin(s.unsubscriber(true)),
	}
}

// listEvents answers workflow.admin.events.list: every event the store
// keeps (the newest store.MaxEvents), oldest first. Each has its
// timestamp: the recorder always sets one (the reference's local server
// did not, Appendix C.9).
func (s *Service) listEvents(ctx context.Context, _ protocol.Empty) (protocol.ListAdminEventsResult, error) {
	evs, err := s.Store.ListEvents(ctx, 0, 0)
	if err != nil {
		return protocol.ListAdminEventsResult{}, storeErr(err, "admin events")
	}
	out := make([]protocol.AdminEvent, 0, len(evs))
	for _, e := range evs {
		out = append(out, live.AdminEvent(e))
	}
	return protocol.ListAdminEventsResult{Events: out, Total: len(out)}, nil
}

// recordArtifactSaved records workflow_artifact_saved; how tells how it
// was made (created_from_plan, created_from_draft), if not given whole.
func (s *Service) recordArtifactSaved(ctx context.Context, a store.Artifact, how protocol.Object) {
	payload := protocol.Object{"artifact_id": a.ID, "version": a.Version, "kind": a.Kind}
	for k, v := range how {
		payload[k] = v
	}
	s.record(ctx, audit.Event{Kind: audit.ArtifactSaved, CapabilityID: records.CapabilityName(a.ID, a.Version), WorkflowName: a.ID, Payload: payload})
}

// recordDeploymentSaved records workflow_deployment_saved.
func (s *Service) recordDeploymentSaved(ctx context.Context, d store.Deployment) {
	s.record(ctx, audit.Event{Kind: audit.DeploymentSaved, CapabilityID: "deployment." + d.ID, WorkflowName: d.ArtifactID,
		Payload: protocol.Object{"deployment_id": d.ID, "artifact_id": d.ArtifactID, "artifact_version": d.ArtifactVersion, "binding_count": len(d.Bindings)}})
}

// recordRefreshStarted records catalog_refresh_started.
func (s *Service) recordRefreshStarted(ctx context.Context, connectionID string) {
	s.record(ctx, audit.Event{Kind: audit.CatalogRefreshStarted, ConnectionID: connectionID, Payload: protocol.Object{"connection_id": connectionID}})
}

// recordRefreshEnded records catalog_refresh_failed or
// catalog_refresh_completed; what changed is recorded by CatalogStored.
func (s *Service) recordRefreshEnded(ctx context.Context, connectionID string, after catalog.Snapshot, err error) {
	if err != nil {
		s.record(ctx, audit.Event{Kind: audit.CatalogRefreshFailed, ConnectionID: connectionID,
			Payload: protocol.Object{"connection_id": connectionID, "error": redactURLQueries(err.Error())}})
		return
	}
	s.record(ctx, audit.Event{Kind: audit.CatalogRefreshCompleted, ConnectionID: connectionID, Payload: protocol.Object{
		"connection_id": connectionID, "fetched_at_epoch_ms": after.FetchedAtEpochMs,
		"node_count": len(after.Tools), "resource_count": len(after.Resources), "prompt_count": len(after.Prompts),
	}})
}

// urlQuery matches the query of a URL in a message.
var urlQuery = regexp.MustCompile(`(?i)(\b[a-z][a-z0-9+.-]*://[^\s?#"'<>]*)\?[^\s#"'<>]*`)

// redactURLQueries removes URL queries from a message that leaves the
// server (an event, a call diagnostic): a query may carry a key or token.
func redactURLQueries(msg string) string {
	return urlQuery.ReplaceAllString(msg, "$1?[redacted]")
}
