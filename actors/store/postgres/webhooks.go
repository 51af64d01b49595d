package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpflow/mcpflow/actors/store"
)

// The writes of a webhook: $1 is its id and $2 its record in both, so
// that either may be the put of reseal.
const (
	insertWebhook = `INSERT INTO webhooks (id, record) VALUES ($1, $2) ON CONFLICT DO NOTHING`
	updateWebhook = `UPDATE webhooks SET record = $2 WHERE id = $1`
)

// CreateWebhook implements store.Webhooks; its secrets are sealed when
// the store was opened with a sealer.
func (s *Store) CreateWebhook(ctx context.Context, h store.Webhook) (err error) {
	defer wrap(&err, "create webhook %q", h.ID)
	if !store.ValidAuthID(h.ID) {
		return store.ErrInvalid
	}
	return s.putWebhook(ctx, insertWebhook, h, store.ErrExists)
}

// SaveWebhook implements store.Webhooks.
func (s *Store) SaveWebhook(ctx context.Context, h store.Webhook) (err error) {
	defer wrap(&err, "save webhook %q", h.ID)
	return s.putWebhook(ctx, updateWebhook, h, store.ErrNotFound)
}

// putWebhook writes h through query, sealed under a lock that orders it
// with Reseal (as putSealed does), and returns none when query changed
// no row.
func (s *Store) putWebhook(ctx context.Context, query string, h store.Webhook, none error) error {
	return s.update(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `LOCK TABLE webhooks IN ROW EXCLUSIVE MODE`); err != nil {
			return err
		}
		sealed, err := store.SealWebhook(s.sealer, h)
		if err != nil {
			return err
		}
		record, err := encode(sealed)
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, query, h.ID, record)
		if err == nil && tag.RowsAffected() == 0 {
			return none
		}
		return err
	})
}

// GetWebhook implements store.Webhooks.
func (s *Store) GetWebhook(ctx context.Context, id string) (_ store.Webhook, err error) {
	defer wrap(&err, "get webhook %q", id)
	h, err := getOne[store.Webhook](ctx, s.pool, `SELECT record FROM webhooks WHERE id = $1`, id)
	if err != nil {
		return h, err
	}
	return store.OpenWebhook(s.sealer, h)
}

// ListWebhooks implements store.Webhooks.
func (s *Store) ListWebhooks(ctx context.Context) (_ []store.Webhook, err error) {
	defer wrap(&err, "list webhooks")
	list, err := getAll[store.Webhook](ctx, s.pool, `SELECT record FROM webhooks ORDER BY id`)
	if err != nil {
		return nil, err
	}
	return store.OpenWebhooks(s.sealer, list)
}

// DeleteWebhook implements store.Webhooks.
func (s *Store) DeleteWebhook(ctx context.Context, id string) (deleted bool, err error) {
	defer wrap(&err, "delete webhook %q", id)
	err = s.update(ctx, func(tx pgx.Tx) error {
		for _, table := range []string{"webhook_deliveries", "webhook_delivery_log"} {
			if _, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE hook_id = $1`, id); err != nil {
				return err
			}
		}
		tag, err := tx.Exec(ctx, `DELETE FROM webhooks WHERE id = $1`, id)
		deleted = tag.RowsAffected() > 0
		return err
	})
	return deleted, err
}

// ClaimDelivery implements store.Webhooks: the primary key orders claims
// across nodes, and the upsert takes an expired claim over.
func (s *Store) ClaimDelivery(ctx context.Context, hook, delivery string, now, expires time.Time) (_ bool, err error) {
	defer wrap(&err, "claim delivery of webhook %q", hook)
	tag, err := s.pool.Exec(ctx, `INSERT INTO webhook_deliveries (hook_id, delivery_id, expires_at) VALUES ($1, $2, $3)
		ON CONFLICT (hook_id, delivery_id) DO UPDATE SET expires_at = excluded.expires_at
		WHERE webhook_deliveries.expires_at <= $4`, hook, delivery, expires, now)
	return tag.RowsAffected() > 0, err
}

// ReleaseDelivery implements store.Webhooks.
func (s *Store) ReleaseDelivery(ctx context.Context, hook, delivery string) (err error) {
	defer wrap(&err, "release delivery of webhook %q", hook)
	_, err = s.deleteOne(ctx, `DELETE FROM webhook_deliveries WHERE hook_id = $1 AND delivery_id = $2`, hook, delivery)
	return err
}

// PruneDeliveries implements store.Webhooks.
func (s *Store) PruneDeliveries(ctx context.Context, now time.Time, limit int) (_ int, err error) {
	defer wrap(&err, "prune webhook deliveries")
	tag, err := s.pool.Exec(ctx, `DELETE FROM webhook_deliveries WHERE (hook_id, delivery_id) IN
		(SELECT hook_id, delivery_id FROM webhook_deliveries WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2)`, now, limit)
	return int(tag.RowsAffected()), err
}

// RecordDelivery implements store.Webhooks: the append and the trim that
// bounds the log are one transaction. Two at once on one webhook may each
// keep the other's entry past the bound until the next.
func (s *Store) RecordDelivery(ctx context.Context, hook string, d store.WebhookDelivery) (err error) {
	defer wrap(&err, "record a delivery of webhook %q", hook)
	record, err := encode(d)
	if err != nil {
		return err
	}
	return s.update(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO webhook_delivery_log (hook_id, record)
			SELECT $1, $2 WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = $1)`, hook, record); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM webhook_delivery_log WHERE hook_id = $1 AND seq <=
			(SELECT seq FROM webhook_delivery_log WHERE hook_id = $1 ORDER BY seq DESC LIMIT 1 OFFSET $2)`, hook, store.RecentDeliveries)
		return err
	})
}

// RecentDeliveries implements store.Webhooks.
func (s *Store) RecentDeliveries(ctx context.Context, hook string) (_ []store.WebhookDelivery, err error) {
	defer wrap(&err, "read the deliveries of webhook %q", hook)
	return getAll[store.WebhookDelivery](ctx, s.pool, `SELECT record FROM webhook_delivery_log WHERE hook_id = $1 ORDER BY seq DESC`, hook)
}
