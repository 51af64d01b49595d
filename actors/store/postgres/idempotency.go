package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpflow/mcpflow/actors/store"
)

// claimKey claims a free key, or one whose claim expired at or before $6,
// the new run's creation; a key held longer is left as it is (no row
// changed). Of two transactions claiming one key at once, the second
// waits on the key's index entry for the first to end, and then sees its
// claim.
const claimKey = `INSERT INTO idempotency_keys (key, run_id, deployment_id, input_hash, expires_at) VALUES ($1, $2, $3, $4, $5)
	ON CONFLICT (key) DO UPDATE SET run_id = excluded.run_id, deployment_id = excluded.deployment_id,
		input_hash = excluded.input_hash, expires_at = excluded.expires_at
	WHERE idempotency_keys.expires_at <= $6`

// claimIdempotencyKey claims, in tx, the key of run r, if it has one, as
// of r's creation: store.ErrKeyTaken when another run holds it.
func claimIdempotencyKey(ctx context.Context, tx pgx.Tx, r store.Run) error {
	k := store.IdempotencyKeyOf(r)
	if k == nil {
		return nil
	}
	tag, err := tx.Exec(ctx, claimKey, k.Key, k.RunID, k.DeploymentID, k.InputHash, k.ExpiresAt, r.CreatedAt)
	if err == nil && tag.RowsAffected() == 0 {
		err = store.KeyTaken(k.Key)
	}
	return err
}

// GetIdempotencyKey implements store.IdempotencyKeys.
func (s *Store) GetIdempotencyKey(ctx context.Context, key string) (k store.IdempotencyKey, err error) {
	defer wrap(&err, "get idempotency key %q", key)
	err = s.pool.QueryRow(ctx, `SELECT run_id, deployment_id, input_hash, expires_at FROM idempotency_keys WHERE key = $1`, key).
		Scan(&k.RunID, &k.DeploymentID, &k.InputHash, &k.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return k, store.ErrNotFound
	}
	k.Key, k.ExpiresAt = key, k.ExpiresAt.UTC()
	return k, err
}

// DropIdempotencyKeys implements store.RunRetention; several nodes
// dropping at once delete disjoint keys.
func (s *Store) DropIdempotencyKeys(ctx context.Context, now time.Time, limit int) (_ int, err error) {
	defer wrap(&err, "drop idempotency keys")
	tag, err := s.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE key IN
		(SELECT key FROM idempotency_keys WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)`, now, limit)
	return int(tag.RowsAffected()), err
}
