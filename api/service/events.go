package service

import (
	"context"
	"log/slog"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// Event kinds of the admin event log (reference §3.10) that mcpflow writes.
const (
	EventConnectionRegistered    = "connection_registered"
	EventConnectionUpdated       = "connection_updated"
	EventConnectionRemoved       = "connection_removed"
	EventRegistrySeeded          = "source_registry_seeded_from_config"
	EventRegistrySeedEntryWins   = "source_registry_seed_existing_entry_wins"
	EventRegistryIgnoredShadow   = "source_registry_ignored_config_shadow"
	EventAuthSaved               = "auth_saved"
	EventSecretsRotated          = "secrets_rotated"
	EventCatalogRefreshStarted   = "catalog_refresh_started"
	EventCatalogRefreshCompleted = "catalog_refresh_completed"
	EventCatalogRefreshFailed    = "catalog_refresh_failed"
	EventToolsChanged            = "tools_changed"
	EventResourcesChanged        = "resources_changed"
	EventPromptsChanged          = "prompts_changed"
	EventToolCallStarted         = "tool_call_started"
	EventToolCallCompleted       = "tool_call_completed"
	EventResourceReadStarted     = "resource_read_started"
	EventResourceReadCompleted   = "resource_read_completed"
	EventRunStarted              = store.EventRunStarted
	EventRunCompleted            = store.EventRunCompleted
	EventRunFailed               = store.EventRunFailed
	EventRunResumed              = store.EventRunResumed
	EventArtifactSaved           = "workflow_artifact_saved"
	EventArtifactDeleted         = "workflow_artifact_deleted"
	EventDeploymentSaved         = "workflow_deployment_saved"
	EventDeploymentDeleted       = "workflow_deployment_deleted"
)

// Event is one admin event to record: its kind, what it is about (any of
// connection, capability and workflow), and a payload that never holds a
// secret (no header, env or auth values, no URL query).
type Event struct {
	Kind         string
	ConnectionID string
	CapabilityID string
	WorkflowName string
	Payload      protocol.Object
}

// record appends an event to the admin event log.
func (s *Service) record(ctx context.Context, e Event) { appendEvent(ctx, s.Store, s.now(), e) }

// appendEvent appends an event to the admin event log of st, stamped now.
// Recording is best effort: a failure is logged and never fails the
// operation that caused the event.
func appendEvent(ctx context.Context, st store.Events, now time.Time, e Event) {
	payload := e.Payload
	if payload == nil {
		payload = protocol.Object{}
	}
	appendRecord(ctx, st, store.Event{Kind: e.Kind, TimestampEpochMs: now.UnixMilli(), Payload: payload,
		ConnectionID: optional(e.ConnectionID), CapabilityID: optional(e.CapabilityID), WorkflowName: optional(e.WorkflowName)})
}

// appendRecord appends an event record to the admin event log of st, best
// effort, as appendEvent does.
func appendRecord(ctx context.Context, st store.Events, ev store.Event) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	if _, err := st.AppendEvent(ctx, ev); err != nil {
		slog.Warn("admin event not recorded", "kind", ev.Kind, "err", err)
	}
}
