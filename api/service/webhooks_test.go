package service_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// TestWebhooksShowTheirSecretOnce: create and rotate_secret answer the
// secret, inspect and list never; the store keeps it; rotation keeps the
// previous one in its grace; a webhook needs an existing deployment and
// a valid map; each change is an admin event without the secret.
func TestWebhooksShowTheirSecretOnce(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	is.NoErr(f.store.SaveDeployment(bounded(t), store.Deployment{ID: "ci", ArtifactID: "ci", ArtifactVersion: 1}))

	_, err := f.call(t, protocol.MethodWebhooksCreate, `{"webhook":{"id":"on-push","deployment_id":"missing"}}`)
	domainError(t, err, "KeyError") // a deployment that does not exist
	_, err = f.call(t, protocol.MethodWebhooksCreate, `{"webhook":{"id":"on-push","deployment_id":"ci","input_map":{"ref":"ref"}}}`)
	domainError(t, err, "ValueError") // a source that is neither a pointer nor a header

	created := conforming[protocol.WebhookWithSecret](t, f, protocol.MethodWebhooksCreate,
		`{"webhook":{"id":"on-push","deployment_id":"ci","input_map":{"ref":"/ref","event":"header:X-GitHub-Event"}}}`)
	is.True(strings.HasPrefix(created.Secret, "whsec_"))
	is.Equal(created.Webhook.Path, "/hooks/on-push")
	stored, err := f.store.GetWebhook(bounded(t), "on-push")
	is.NoErr(err)
	is.Equal(stored.Secrets, []store.WebhookSecret{{Secret: created.Secret}}) // the store keeps it
	_, err = f.call(t, protocol.MethodWebhooksCreate, `{"webhook":{"id":"on-push","deployment_id":"ci"}}`)
	domainError(t, err, "ValueError") // ids are unique

	inspected := conforming[protocol.Webhook](t, f, protocol.MethodWebhooksInspect, `{"webhook_id":"on-push"}`)
	listed := conforming[protocol.ListWebhooksResult](t, f, protocol.MethodWebhooksList, `{}`)
	is.Equal(listed.Webhooks, []protocol.Webhook{inspected})
	is.True(!strings.Contains(jsonOf(inspected)+jsonOf(listed), created.Secret)) // never shown again

	rotated := conforming[protocol.WebhookWithSecret](t, f, protocol.MethodWebhooksRotateSecret, `{"webhook_id":"on-push","grace_seconds":3600}`)
	is.True(rotated.Secret != created.Secret)
	is.True(rotated.Webhook.PreviousSecretExpiresAtMs != nil) // the old one is in its grace
	stored, err = f.store.GetWebhook(bounded(t), "on-push")
	is.NoErr(err)
	is.Equal(len(stored.Secrets), 2)
	is.Equal(stored.Secrets[1].Secret, created.Secret)

	deleted := conforming[protocol.DeleteWebhookResult](t, f, protocol.MethodWebhooksDelete, `{"webhook_id":"on-push"}`)
	is.True(deleted.Deleted)
	_, err = f.call(t, protocol.MethodWebhooksInspect, `{"webhook_id":"on-push"}`)
	domainError(t, err, "KeyError")

	events, err := f.store.ListEvents(bounded(t), 0, 100)
	is.NoErr(err)
	var kinds []string
	for _, e := range events {
		if strings.HasPrefix(e.Kind, "webhook_") {
			kinds = append(kinds, e.Kind)
		}
		is.True(!strings.Contains(jsonOf(e), created.Secret) && !strings.Contains(jsonOf(e), rotated.Secret)) // no event shows a secret
	}
	is.Equal(kinds, []string{"webhook_created", "webhook_secret_rotated", "webhook_deleted"})
}

// TestWebhookInspectShowsRecentDeliveries: inspect answers the webhook's
// log of deliveries, newest first, in the manifest's shape; list does not.
func TestWebhookInspectShowsRecentDeliveries(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	is.NoErr(f.store.SaveDeployment(bounded(t), store.Deployment{ID: "ci", ArtifactID: "ci", ArtifactVersion: 1}))
	conforming[protocol.WebhookWithSecret](t, f, protocol.MethodWebhooksCreate, `{"webhook":{"id":"on-push","deployment_id":"ci"}}`)
	fresh := conforming[protocol.Webhook](t, f, protocol.MethodWebhooksInspect, `{"webhook_id":"on-push"}`)
	is.Equal(len(fresh.RecentDeliveries), 0) // none yet

	is.NoErr(f.store.RecordDelivery(bounded(t), "on-push", store.WebhookDelivery{ReceivedAtMs: 1000, Outcome: "bad_signature", Reason: "the signature does not match", Status: 401}))
	is.NoErr(f.store.RecordDelivery(bounded(t), "on-push", store.WebhookDelivery{ReceivedAtMs: 2000, DeliveryID: "d-1", Outcome: "started", Status: 202, RunID: "run_1"}))
	inspected := conforming[protocol.Webhook](t, f, protocol.MethodWebhooksInspect, `{"webhook_id":"on-push"}`)
	is.Equal(inspected.RecentDeliveries, []protocol.WebhookDelivery{
		{ReceivedAtEpochMs: 2000, DeliveryID: "d-1", Outcome: "started", Status: 202, RunID: "run_1"},
		{ReceivedAtEpochMs: 1000, Outcome: "bad_signature", Reason: "the signature does not match", Status: 401},
	})
	listed := conforming[protocol.ListWebhooksResult](t, f, protocol.MethodWebhooksList, `{}`)
	is.Equal(len(listed.Webhooks[0].RecentDeliveries), 0) // list leaves the logs out
}
