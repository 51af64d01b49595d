package service

import (
	"context"

	"github.com/mcpflow/mcpflow/actors/audit"
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
		protocol.MethodAdminEventsSubscribe:   pushing(forAdmin(s.subscribeAdminEvents)),
		protocol.MethodAdminEventsUnsubscribe: pushing(forAdmin(s.unsubscriber(true))),
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
	s.record(ctx, audit.ArtifactSavedEvent(a, records.CapabilityName(a.ID, a.Version), how))
}
