package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
)

// The queries of idempotency keys. A claim takes a free key, or one whose
// claim expired at or before the new run's creation; a key held longer
// is left as it is (no row changed).
var (
	claimKey = newWriteQuery(`INSERT INTO idempotency_keys (key, run_id, deployment_id, input_hash, expires_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET run_id = excluded.run_id, deployment_id = excluded.deployment_id,
			input_hash = excluded.input_hash, expires_at = excluded.expires_at
		WHERE idempotency_keys.expires_at <= ?`)
	dropKeys = newWriteQuery(`DELETE FROM idempotency_keys WHERE key IN
		(SELECT key FROM idempotency_keys WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`)
	getKey = newReadQuery(`SELECT run_id, deployment_id, input_hash, expires_at FROM idempotency_keys WHERE key = ?`)
)

// claimIdempotencyKey claims, in tx, the key of run r, if it has one, as
// of r's creation: store.ErrKeyTaken when another run holds it.
func claimIdempotencyKey(ctx context.Context, tx writeTx, r store.Run) error {
	k := store.IdempotencyKeyOf(r)
	if k == nil {
		return nil
	}
	n, err := rowsAffected(tx.exec(ctx, claimKey, k.Key, k.RunID, k.DeploymentID, k.InputHash, k.ExpiresAt.UnixMilli(), r.CreatedAt.UnixMilli()))
	if err == nil && n == 0 {
		err = store.KeyTaken(k.Key)
	}
	return err
}

// GetIdempotencyKey implements store.IdempotencyKeys.
func (s *Store) GetIdempotencyKey(ctx context.Context, key string) (k store.IdempotencyKey, err error) {
	defer wrap(&err, "get idempotency key %q", key)
	var expires int64
	err = s.reads.row(ctx, getKey, key).Scan(&k.RunID, &k.DeploymentID, &k.InputHash, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return k, store.ErrNotFound
	}
	k.Key, k.ExpiresAt = key, time.UnixMilli(expires).UTC()
	return k, err
}

// DropIdempotencyKeys implements store.RunRetention in one write.
func (s *Store) DropIdempotencyKeys(ctx context.Context, now time.Time, limit int) (dropped int, err error) {
	defer wrap(&err, "drop idempotency keys")
	err = s.update(ctx, func(ctx context.Context, tx writeTx) error {
		n, err := rowsAffected(tx.exec(ctx, dropKeys, now.UnixMilli(), limit))
		dropped = int(n)
		return err
	})
	return dropped, err
}
