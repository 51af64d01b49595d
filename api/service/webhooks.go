package service

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/webhooks"
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// webhookMethods are workflow.webhooks.*: signed webhooks. What makes or
// changes a secret is the admin's (a webhook starts runs without a
// token); reading the definitions, which never show a secret, is read.
func (s *Service) webhookMethods() map[string]rpc.Method {
	return map[string]rpc.Method{
		protocol.MethodWebhooksCreate:       forAdmin(s.createWebhook),
		protocol.MethodWebhooksInspect:      forRead(s.inspectWebhook),
		protocol.MethodWebhooksList:         forRead(s.listWebhooks),
		protocol.MethodWebhooksRotateSecret: forAdmin(s.rotateWebhookSecret),
		protocol.MethodWebhooksDelete:       forAdmin(s.deleteWebhook),
	}
}

// createWebhook stores a webhook for an existing deployment with a new
// secret, answered this once.
func (s *Service) createWebhook(ctx context.Context, p protocol.CreateWebhookParams) (protocol.WebhookWithSecret, error) {
	spec := p.Webhook
	if !store.ValidAuthID(spec.ID) {
		return protocol.WebhookWithSecret{}, invalid("webhook id must start with alphanumeric or underscore and contain only [A-Za-z0-9_.-]")
	}
	if err := webhooks.CheckInputMap(spec.InputMap); err != nil {
		return protocol.WebhookWithSecret{}, invalid("%v", err)
	}
	if _, err := s.Store.GetDeployment(ctx, spec.DeploymentID); err != nil {
		return protocol.WebhookWithSecret{}, storeErr(err, "workflow deployment "+strconv.Quote(spec.DeploymentID))
	}
	secret, err := webhooks.NewSecret()
	if err != nil {
		return protocol.WebhookWithSecret{}, upstream("%v", err)
	}
	h := store.Webhook{ID: spec.ID, DeploymentID: spec.DeploymentID, InputMap: spec.InputMap,
		Secrets: []store.WebhookSecret{{Secret: secret}}, CreatedAtMs: s.now().UnixMilli()}
	if err := s.Store.CreateWebhook(ctx, h); err != nil {
		if errors.Is(err, store.ErrExists) {
			return protocol.WebhookWithSecret{}, invalid("webhook %q already exists: delete it first, or rotate its secret", spec.ID)
		}
		return protocol.WebhookWithSecret{}, storeErr(err, webhookWhat(spec.ID))
	}
	s.record(ctx, audit.Event{Kind: audit.WebhookCreated, WorkflowName: h.DeploymentID,
		Payload: protocol.Object{"webhook_id": h.ID, "deployment_id": h.DeploymentID}})
	return protocol.WebhookWithSecret{Webhook: webhookPayload(h, s.now()), Secret: secret}, nil
}

// inspectWebhook answers the webhook with its log of recent deliveries.
func (s *Service) inspectWebhook(ctx context.Context, p protocol.WebhookIDParams) (protocol.Webhook, error) {
	h, err := s.Store.GetWebhook(ctx, p.WebhookID)
	if err != nil {
		return protocol.Webhook{}, storeErr(err, webhookWhat(p.WebhookID))
	}
	logged, err := s.Store.RecentDeliveries(ctx, p.WebhookID)
	if err != nil {
		return protocol.Webhook{}, storeErr(err, webhookWhat(p.WebhookID))
	}
	out := webhookPayload(h, s.now())
	for _, d := range logged {
		out.RecentDeliveries = append(out.RecentDeliveries, protocol.WebhookDelivery{ReceivedAtEpochMs: d.ReceivedAtMs,
			DeliveryID: d.DeliveryID, Outcome: d.Outcome, Reason: d.Reason, Status: d.Status, RunID: d.RunID})
	}
	return out, nil
}

func (s *Service) listWebhooks(ctx context.Context, _ protocol.Empty) (protocol.ListWebhooksResult, error) {
	list, err := s.Store.ListWebhooks(ctx)
	if err != nil {
		return protocol.ListWebhooksResult{}, storeErr(err, "webhooks")
	}
	out := make([]protocol.Webhook, 0, len(list))
	for _, h := range list {
		out = append(out, webhookPayload(h, s.now()))
	}
	return protocol.ListWebhooksResult{Webhooks: out, Total: len(out)}, nil
}

// rotateWebhookSecret gives the webhook a new current secret; the one it
// replaces verifies deliveries for the grace (webhooks.DefaultGrace).
// Two rotations at once may each keep only its own predecessor in grace:
// the last saved wins.
func (s *Service) rotateWebhookSecret(ctx context.Context, p protocol.RotateWebhookSecretParams) (protocol.WebhookWithSecret, error) {
	h, err := s.Store.GetWebhook(ctx, p.WebhookID)
	if err != nil {
		return protocol.WebhookWithSecret{}, storeErr(err, webhookWhat(p.WebhookID))
	}
	grace := webhooks.DefaultGrace
	if p.GraceSeconds != nil {
		grace = time.Duration(*p.GraceSeconds) * time.Second
	}
	secret, err := webhooks.NewSecret()
	if err != nil {
		return protocol.WebhookWithSecret{}, upstream("%v", err)
	}
	now := s.now()
	h.Secrets, h.RotatedAtMs = webhooks.Rotate(h, secret, now, grace), now.UnixMilli()
	if err := s.Store.SaveWebhook(ctx, h); err != nil {
		return protocol.WebhookWithSecret{}, storeErr(err, webhookWhat(p.WebhookID))
	}
	s.record(ctx, audit.Event{Kind: audit.WebhookSecretRotated, WorkflowName: h.DeploymentID,
		Payload: protocol.Object{"webhook_id": h.ID, "grace_seconds": int64(grace / time.Second)}})
	return protocol.WebhookWithSecret{Webhook: webhookPayload(h, now), Secret: secret}, nil
}

func (s *Service) deleteWebhook(ctx context.Context, p protocol.WebhookIDParams) (protocol.DeleteWebhookResult, error) {
	deleted, err := s.Store.DeleteWebhook(ctx, p.WebhookID)
	if err != nil {
		return protocol.DeleteWebhookResult{}, storeErr(err, webhookWhat(p.WebhookID))
	}
	if deleted {
		s.record(ctx, audit.Event{Kind: audit.WebhookDeleted, Payload: protocol.Object{"webhook_id": p.WebhookID}})
	}
	return protocol.DeleteWebhookResult{ID: p.WebhookID, Deleted: deleted}, nil
}

// webhookPayload shows h without its secrets: when the latest of those
// still in their grace at now expires, if any.
func webhookPayload(h store.Webhook, now time.Time) protocol.Webhook {
	out := protocol.Webhook{ID: h.ID, DeploymentID: h.DeploymentID, InputMap: h.InputMap,
		Path: "/hooks/" + h.ID, CreatedAtEpochMs: h.CreatedAtMs}
	if out.InputMap == nil {
		out.InputMap = map[string]string{}
	}
	if h.RotatedAtMs != 0 {
		out.RotatedAtEpochMs = ptr(h.RotatedAtMs)
	}
	for _, sec := range h.Secrets {
		if sec.ExpiresAtMs != 0 && sec.Valid(now) && (out.PreviousSecretExpiresAtMs == nil || sec.ExpiresAtMs > *out.PreviousSecretExpiresAtMs) {
			out.PreviousSecretExpiresAtMs = ptr(sec.ExpiresAtMs)
		}
	}
	return out
}

func webhookWhat(id string) string { return "webhook " + strconv.Quote(id) }
