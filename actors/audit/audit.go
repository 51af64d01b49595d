// Package audit owns the writing of the admin event log (reference §3.10):
// the kinds of event mcpflow records, the events of the records and
// catalogs the API changes (events.go, with the redaction of URL queries
// in their messages), and a best-effort append that never fails the
// operation that caused the event, on the caller's path (Record) or off
// it, through a bounded queue (Appender). Reading the log is the
// store's; showing it is the API's.
package audit

import (
	"context"
	"log/slog"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
)

// Event kinds of the admin event log that mcpflow writes.
const (
	ConnectionRegistered    = "connection_registered"
	ConnectionUpdated       = "connection_updated"
	ConnectionRemoved       = "connection_removed"
	RegistrySeeded          = "source_registry_seeded_from_config"
	RegistrySeedEntryWins   = "source_registry_seed_existing_entry_wins"
	RegistryIgnoredShadow   = "source_registry_ignored_config_shadow"
	AuthSaved               = "auth_saved"
	SecretsRotated          = "secrets_rotated"
	CatalogRefreshStarted   = "catalog_refresh_started"
	CatalogRefreshCompleted = "catalog_refresh_completed"
	CatalogRefreshFailed    = "catalog_refresh_failed"
	ToolsChanged            = "tools_changed"
	ResourcesChanged        = "resources_changed"
	PromptsChanged          = "prompts_changed"
	// CapabilityDrift records that a tool a deployment binds changed or
	// disappeared upstream; deployments.validate reports it per the
	// deployment's drift policy.
	CapabilityDrift       = "capability_drift"
	ToolCallStarted       = "tool_call_started"
	ToolCallCompleted     = "tool_call_completed"
	ResourceReadStarted   = "resource_read_started"
	ResourceReadCompleted = "resource_read_completed"
	RunStarted            = store.EventRunStarted
	RunCompleted          = store.EventRunCompleted
	RunFailed             = store.EventRunFailed
	RunResumed            = store.EventRunResumed
	ArtifactSaved         = "workflow_artifact_saved"
	ArtifactDeleted       = "workflow_artifact_deleted"
	DeploymentSaved       = "workflow_deployment_saved"
	DeploymentDeleted     = "workflow_deployment_deleted"
	// StoreWritableAgain records that the store took a write again after
	// writes had failed for lack of disk space (nothing can record the
	// moment it filled: the log is in the store).
	StoreWritableAgain = "store_writable_again"
	// The webhooks' events (mcpflow extensions): a webhook created, its
	// secret rotated, deleted, and a delivery refused (its payload says
	// why and with what HTTP status, never anything of the body).
	WebhookCreated          = "webhook_created"
	WebhookSecretRotated    = "webhook_secret_rotated"
	WebhookDeleted          = "webhook_deleted"
	WebhookDeliveryRejected = "webhook_delivery_rejected"
	// The schedules' events (mcpflow extensions): a schedule created,
	// updated, paused, unpaused or deleted; a fire (its outcome, run and
	// tick), a tick skipped by the overlap policy, and the ticks missed
	// while nothing fired them (how many caught up, how many skipped).
	ScheduleCreated  = "schedule_created"
	ScheduleUpdated  = "schedule_updated"
	SchedulePaused   = "schedule_paused"
	ScheduleUnpaused = "schedule_unpaused"
	ScheduleDeleted  = "schedule_deleted"
	ScheduleFired    = "schedule_fired"
	ScheduleSkipped  = "schedule_skipped"
	ScheduleMissed   = "schedule_missed"
)

// Timeout bounds each append.
const Timeout = 10 * time.Second

// Event is one admin event to record: its kind, what it is about (any of
// connection, capability and workflow), and a payload that never holds a
// secret (no header, env or auth values, no URL query).
type Event struct {
	Kind         string
	ConnectionID string
	CapabilityID string
	WorkflowName string
	Payload      map[string]any
}

// Record appends e to the admin event log of st, stamped now, on the
// caller's path (an Appender records off it).
func Record(ctx context.Context, st store.Events, now time.Time, e Event) {
	Append(ctx, st, event(now, e))
}

// event is the record of e, stamped now.
func event(now time.Time, e Event) store.Event {
	payload := e.Payload
	if payload == nil {
		payload = map[string]any{}
	}
	return store.Event{Kind: e.Kind, TimestampEpochMs: now.UnixMilli(), Payload: payload,
		ConnectionID: optional(e.ConnectionID), CapabilityID: optional(e.CapabilityID), WorkflowName: optional(e.WorkflowName)}
}

// Append appends an event record to the admin event log of st. Recording
// is best effort: a failure is logged and never fails the operation that
// caused the event, and the caller's cancellation does not cut it short.
func Append(ctx context.Context, st store.Events, ev store.Event) {
	appendWithin(context.WithoutCancel(ctx), st, ev)
}

// appendWithin is Append, cut short when ctx ends.
func appendWithin(ctx context.Context, st store.Events, ev store.Event) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	if _, err := st.AppendEvent(ctx, ev); err != nil {
		slog.Warn("admin event not recorded", "kind", ev.Kind, "err", err)
	}
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
