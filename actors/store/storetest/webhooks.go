package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
)

// webhook is a webhook with a current secret and one in its grace.
func webhook(id string) store.Webhook {
	return store.Webhook{
		ID: id, DeploymentID: "dep-" + id, InputMap: map[string]string{"ref": "/ref", "event": "header:X-GitHub-Event"},
		Secrets:     []store.WebhookSecret{{Secret: "whsec-current-" + id}, {Secret: "whsec-old-" + id, ExpiresAtMs: 1_900_000_000_000}},
		CreatedAtMs: 1_800_000_000_000,
	}
}

func testWebhooks(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	list, err := s.ListWebhooks(ctx)
	is.NoErr(err)
	is.Equal(len(list), 0)

	for _, id := range []string{"hook-b", "hook-a"} {
		is.NoErr(s.CreateWebhook(ctx, webhook(id)))
	}
	is.True(errors.Is(s.CreateWebhook(ctx, webhook("hook-a")), store.ErrExists))       // ids are unique
	is.True(errors.Is(s.CreateWebhook(ctx, webhook("bad id!")), store.ErrInvalid))     // ids are auth-like
	is.True(errors.Is(s.SaveWebhook(ctx, webhook("hook-missing")), store.ErrNotFound)) // save replaces only

	rotated := webhook("hook-a")
	rotated.Secrets = []store.WebhookSecret{{Secret: "whsec-next"}, {Secret: "whsec-current-hook-a", ExpiresAtMs: 1_950_000_000_000}}
	rotated.RotatedAtMs = 1_850_000_000_000
	is.NoErr(s.SaveWebhook(ctx, rotated))
	got, err := s.GetWebhook(ctx, "hook-a")
	is.NoErr(err)
	is.Equal(got, rotated) // reads back as saved, secrets opened
	_, err = s.GetWebhook(ctx, "hook-missing")
	is.True(errors.Is(err, store.ErrNotFound))

	list, err = s.ListWebhooks(ctx)
	is.NoErr(err)
	is.Equal(list, []store.Webhook{rotated, webhook("hook-b")}) // sorted by id

	deleted, err := s.DeleteWebhook(ctx, "hook-a")
	is.NoErr(err)
	is.True(deleted)
	deleted, err = s.DeleteWebhook(ctx, "hook-a")
	is.NoErr(err)
	is.True(!deleted)
}

func testWebhookDeliveries(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	day := now.Add(24 * time.Hour)

	claimed, err := s.ClaimDelivery(ctx, "hook", "d-1", now, day)
	is.NoErr(err)
	is.True(claimed) // a new delivery
	claimed, err = s.ClaimDelivery(ctx, "hook", "d-1", now.Add(time.Hour), day)
	is.NoErr(err)
	is.True(!claimed) // a replay
	claimed, err = s.ClaimDelivery(ctx, "other", "d-1", now, day)
	is.NoErr(err)
	is.True(claimed) // delivery ids are per hook

	is.NoErr(s.ReleaseDelivery(ctx, "hook", "d-1"))
	claimed, err = s.ClaimDelivery(ctx, "hook", "d-1", now, day)
	is.NoErr(err)
	is.True(claimed) // released: the retry is taken

	claimed, err = s.ClaimDelivery(ctx, "hook", "d-1", day, day.Add(24*time.Hour))
	is.NoErr(err)
	is.True(claimed) // expired: taken again

	// Of many claims at once, exactly one is taken.
	var wg sync.WaitGroup
	results := make(chan bool, 20)
	for range cap(results) {
		wg.Go(func() {
			ok, err := s.ClaimDelivery(ctx, "hook", "d-race", now, day)
			is.NoErr(err)
			results <- ok
		})
	}
	wg.Wait()
	close(results)
	taken := 0
	for ok := range results {
		if ok {
			taken++
		}
	}
	is.Equal(taken, 1)

	// Pruning deletes the expired claims only, within its limit.
	n, err := s.PruneDeliveries(ctx, day, 1)
	is.NoErr(err)
	is.Equal(n, 1) // limited
	n, err = s.PruneDeliveries(ctx, day, 100)
	is.NoErr(err)
	is.Equal(n, 1) // other/d-1 and hook/d-race expired at day; hook/d-1 lives a day more
	claimed, err = s.ClaimDelivery(ctx, "hook", "d-1", day, day)
	is.NoErr(err)
	is.True(!claimed) // still kept

	// Deleting the webhook forgets its deliveries.
	is.NoErr(s.CreateWebhook(ctx, webhook("hook")))
	_, err = s.DeleteWebhook(ctx, "hook")
	is.NoErr(err)
	claimed, err = s.ClaimDelivery(ctx, "hook", "d-1", day, day.Add(time.Hour))
	is.NoErr(err)
	is.True(claimed)
}

// testWebhookDeliveryLog: each webhook logs its deliveries apart, newest
// first, the newest store.RecentDeliveries kept; a webhook that does not
// exist logs nothing, and a deleted one's log goes with it.
func testWebhookDeliveryLog(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	for _, id := range []string{"hook-a", "hook-b"} {
		is.NoErr(s.CreateWebhook(ctx, webhook(id)))
	}
	got, err := s.RecentDeliveries(ctx, "hook-a")
	is.NoErr(err)
	is.Equal(len(got), 0) // none yet

	rejected := store.WebhookDelivery{ReceivedAtMs: 1_800_000_000_000, Outcome: "bad_signature", Reason: "the signature does not match", Status: 401}
	started := store.WebhookDelivery{ReceivedAtMs: 1_800_000_000_100, DeliveryID: "d-1", Outcome: "started", Status: 202, RunID: "run_1"}
	is.NoErr(s.RecordDelivery(ctx, "hook-a", rejected))
	is.NoErr(s.RecordDelivery(ctx, "hook-a", started))
	is.NoErr(s.RecordDelivery(ctx, "hook-b", rejected))
	is.NoErr(s.RecordDelivery(ctx, "hook-missing", started)) // no such webhook: nothing kept
	got, err = s.RecentDeliveries(ctx, "hook-a")
	is.NoErr(err)
	is.Equal(got, []store.WebhookDelivery{started, rejected}) // newest first, as recorded
	got, err = s.RecentDeliveries(ctx, "hook-missing")
	is.NoErr(err)
	is.Equal(len(got), 0)

	for i := range store.RecentDeliveries + 7 {
		is.NoErr(s.RecordDelivery(ctx, "hook-a", store.WebhookDelivery{ReceivedAtMs: 1_800_000_001_000 + int64(i), Outcome: "started", Status: 202}))
	}
	got, err = s.RecentDeliveries(ctx, "hook-a")
	is.NoErr(err)
	is.Equal(len(got), store.RecentDeliveries)                                       // bounded
	is.Equal(got[0].ReceivedAtMs, int64(1_800_000_001_000+store.RecentDeliveries+6)) // the newest kept
	is.Equal(got[store.RecentDeliveries-1].ReceivedAtMs, int64(1_800_000_001_000+7)) // the oldest dropped
	other, err := s.RecentDeliveries(ctx, "hook-b")
	is.NoErr(err)
	is.Equal(other, []store.WebhookDelivery{rejected}) // another webhook's log is its own

	deleted, err := s.DeleteWebhook(ctx, "hook-a")
	is.NoErr(err)
	is.True(deleted)
	is.NoErr(s.CreateWebhook(ctx, webhook("hook-a")))
	got, err = s.RecentDeliveries(ctx, "hook-a")
	is.NoErr(err)
	is.Equal(len(got), 0) // the log went with the webhook
}
