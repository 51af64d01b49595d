package sqlite

import (
	"context"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
)

// The queries of webhooks and the deliveries they have seen. ?1 is the
// webhook's id and ?2 its record in both writes, so that either may be
// the put of reseal.
var (
	insertWebhook  = newWriteQuery(`INSERT INTO webhooks (id, record) VALUES (?1, ?2) ON CONFLICT DO NOTHING`)
	updateWebhook  = newWriteQuery(`UPDATE webhooks SET record = ?2 WHERE id = ?1`)
	deleteWebhook  = newWriteQuery(`DELETE FROM webhooks WHERE id = ?`)
	deleteHookSeen = newWriteQuery(`DELETE FROM webhook_deliveries WHERE hook_id = ?`)
	deleteHookLog  = newWriteQuery(`DELETE FROM webhook_delivery_log WHERE hook_id = ?`)
	keptWebhooks   = newWriteQuery(`SELECT record FROM webhooks ORDER BY id`)
	getWebhook     = newReadQuery(`SELECT record FROM webhooks WHERE id = ?`)
	listWebhooks   = newReadQuery(`SELECT record FROM webhooks ORDER BY id`)
	claimDelivery  = newWriteQuery(`INSERT INTO webhook_deliveries (hook_id, delivery_id, expires_at) VALUES (?1, ?2, ?3)
		ON CONFLICT (hook_id, delivery_id) DO UPDATE SET expires_at = excluded.expires_at WHERE webhook_deliveries.expires_at <= ?4`)
	releaseDelivery = newWriteQuery(`DELETE FROM webhook_deliveries WHERE hook_id = ? AND delivery_id = ?`)
	pruneDeliveries = newWriteQuery(`DELETE FROM webhook_deliveries WHERE (hook_id, delivery_id) IN
		(SELECT hook_id, delivery_id FROM webhook_deliveries WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`)
	// logDelivery appends to the log of a webhook that exists, and
	// trimHookLog drops what is past the newest ?2 of its entries.
	logDelivery = newWriteQuery(`INSERT INTO webhook_delivery_log (hook_id, record)
		SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = ?1)`)
	trimHookLog = newWriteQuery(`DELETE FROM webhook_delivery_log WHERE hook_id = ?1 AND seq <=
		(SELECT seq FROM webhook_delivery_log WHERE hook_id = ?1 ORDER BY seq DESC LIMIT 1 OFFSET ?2)`)
	recentDeliveries = newReadQuery(`SELECT record FROM webhook_delivery_log WHERE hook_id = ? ORDER BY seq DESC`)
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

// putWebhook writes h through query, sealed in the writer (as putSealed
// does), and returns none when query changed no row.
func (s *Store) putWebhook(ctx context.Context, query writeQuery, h store.Webhook, none error) error {
	return s.update(ctx, func(ctx context.Context, tx writeTx) error {
		sealed, err := store.SealWebhook(s.sealer, h)
		if err != nil {
			return err
		}
		record, err := encode(sealed)
		if err != nil {
			return err
		}
		n, err := rowsAffected(tx.exec(ctx, query, h.ID, record))
		if err == nil && n == 0 {
			return none
		}
		return err
	})
}

// GetWebhook implements store.Webhooks.
func (s *Store) GetWebhook(ctx context.Context, id string) (_ store.Webhook, err error) {
	defer wrap(&err, "get webhook %q", id)
	h, err := getOne[store.Webhook](ctx, s.reads, getWebhook, id)
	if err != nil {
		return h, err
	}
	return store.OpenWebhook(s.sealer, h)
}

// ListWebhooks implements store.Webhooks.
func (s *Store) ListWebhooks(ctx context.Context) (_ []store.Webhook, err error) {
	defer wrap(&err, "list webhooks")
	list, err := getAll[store.Webhook](ctx, s.reads, listWebhooks)
	if err != nil {
		return nil, err
	}
	return store.OpenWebhooks(s.sealer, list)
}

// DeleteWebhook implements store.Webhooks.
func (s *Store) DeleteWebhook(ctx context.Context, id string) (deleted bool, err error) {
	defer wrap(&err, "delete webhook %q", id)
	err = s.update(ctx, func(ctx context.Context, tx writeTx) error {
		for _, q := range []writeQuery{deleteHookSeen, deleteHookLog} {
			if _, err := tx.exec(ctx, q, id); err != nil {
				return err
			}
		}
		n, err := rowsAffected(tx.exec(ctx, deleteWebhook, id))
		deleted = n > 0
		return err
	})
	return deleted, err
}

// ClaimDelivery implements store.Webhooks: the writer orders claims, and
// the upsert takes an expired claim over.
func (s *Store) ClaimDelivery(ctx context.Context, hook, delivery string, now, expires time.Time) (claimed bool, err error) {
	defer wrap(&err, "claim delivery of webhook %q", hook)
	err = s.update(ctx, func(ctx context.Context, tx writeTx) error {
		n, err := rowsAffected(tx.exec(ctx, claimDelivery, hook, delivery, timeKey(expires), timeKey(now)))
		claimed = n > 0
		return err
	})
	return claimed, err
}

// ReleaseDelivery implements store.Webhooks.
func (s *Store) ReleaseDelivery(ctx context.Context, hook, delivery string) (err error) {
	defer wrap(&err, "release delivery of webhook %q", hook)
	_, err = s.deleteOne(ctx, releaseDelivery, hook, delivery)
	return err
}

// PruneDeliveries implements store.Webhooks.
func (s *Store) PruneDeliveries(ctx context.Context, now time.Time, limit int) (n int, err error) {
	defer wrap(&err, "prune webhook deliveries")
	err = s.update(ctx, func(ctx context.Context, tx writeTx) error {
		deleted, err := rowsAffected(tx.exec(ctx, pruneDeliveries, timeKey(now), limit))
		n = int(deleted)
		return err
	})
	return n, err
}

// RecordDelivery implements store.Webhooks: the append and the trim that
// bounds the log are one transaction.
func (s *Store) RecordDelivery(ctx context.Context, hook string, d store.WebhookDelivery) (err error) {
	defer wrap(&err, "record a delivery of webhook %q", hook)
	record, err := encode(d)
	if err != nil {
		return err
	}
	return s.update(ctx, func(ctx context.Context, tx writeTx) error {
		if _, err := tx.exec(ctx, logDelivery, hook, record); err != nil {
			return err
		}
		_, err := tx.exec(ctx, trimHookLog, hook, store.RecentDeliveries)
		return err
	})
}

// RecentDeliveries implements store.Webhooks.
func (s *Store) RecentDeliveries(ctx context.Context, hook string) (_ []store.WebhookDelivery, err error) {
	defer wrap(&err, "read the deliveries of webhook %q", hook)
	return getAll[store.WebhookDelivery](ctx, s.reads, recentDeliveries, hook)
}
