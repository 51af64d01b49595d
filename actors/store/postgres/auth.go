package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mcpflow/mcpflow/actors/store"
)

// upsertAuth is the upsert of an auth record.
const upsertAuth = `INSERT INTO auth_records (id, record) VALUES ($1, $2)
	ON CONFLICT (id) DO UPDATE SET record = excluded.record`

// SaveAuth implements store.AuthRecords. The payload is stored in the
// auth_records table, which only the roles that may read secrets should
// be granted (see docs/postgres.md), sealed when the store was opened
// with a sealer. It seals once it holds the table in ROW EXCLUSIVE mode,
// which ResealAuth's EXCLUSIVE lock waits for and holds off: a save on any
// node is re-sealed by a ResealAuth that follows it, or seals under the
// key the one before it sealed under.
func (s *Store) SaveAuth(ctx context.Context, a store.AuthRecord) (err error) {
	defer wrap(&err, "save auth record %q", a.ID)
	if !store.ValidAuthID(a.ID) {
		return fmt.Errorf("the id is not a valid auth id: %w", store.ErrInvalid)
	}
	if s.sealer == nil {
		return upsert(ctx, s.pool, upsertAuth, a.ID, a)
	}
	return s.update(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `LOCK TABLE auth_records IN ROW EXCLUSIVE MODE`); err != nil {
			return err
		}
		sealed, err := store.SealAuth(s.sealer, a)
		if err != nil {
			return err
		}
		return upsert(ctx, tx, upsertAuth, a.ID, sealed)
	})
}

// GetAuth implements store.AuthRecords.
func (s *Store) GetAuth(ctx context.Context, id string) (_ store.AuthRecord, err error) {
	defer wrap(&err, "get auth record %q", id)
	a, err := getOne[store.AuthRecord](ctx, s.pool, `SELECT record FROM auth_records WHERE id = $1`, id)
	if err != nil {
		return a, err
	}
	return store.OpenAuth(s.sealer, a)
}

// ListAuth implements store.AuthRecords.
func (s *Store) ListAuth(ctx context.Context) (_ []store.AuthRecord, err error) {
	defer wrap(&err, "list auth records")
	list, err := getAll[store.AuthRecord](ctx, s.pool, `SELECT record FROM auth_records ORDER BY id`)
	if err != nil {
		return nil, err
	}
	return store.OpenAuths(s.sealer, list)
}

// DeleteAuth implements store.AuthRecords.
func (s *Store) DeleteAuth(ctx context.Context, id string) (_ bool, err error) {
	defer wrap(&err, "delete auth record %q", id)
	return s.deleteOne(ctx, `DELETE FROM auth_records WHERE id = $1`, id)
}

// ResealAuth implements store.AuthResealer. It holds the table in
// EXCLUSIVE mode from before its read to its commit: it waits for the
// saves and deletes in progress on every node, holds off new ones (reads
// go on), and nodes that open the store at once reseal one after the
// other.
// The old row versions stay in the table's files until autovacuum reuses
// them, never in a pg_dump (see docs/operations.md).
func (s *Store) ResealAuth(ctx context.Context) (n int, err error) {
	defer wrap(&err, "seal auth records")
	if s.sealer == nil {
		return 0, fmt.Errorf("the store was opened without a sealer")
	}
	err = s.update(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `LOCK TABLE auth_records IN EXCLUSIVE MODE`); err != nil {
			return err
		}
		kept, err := getAll[store.AuthRecord](ctx, tx, `SELECT record FROM auth_records ORDER BY id`)
		if err != nil {
			return err
		}
		n = 0
		for _, a := range kept {
			sealed, changed, err := store.ResealOne(s.sealer, a)
			if err != nil {
				return err
			}
			if !changed {
				continue
			}
			if err := upsert(ctx, tx, upsertAuth, sealed.ID, sealed); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}
