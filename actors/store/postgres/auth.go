package postgres

import (
	"context"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/store"
)

// upsertAuth is the upsert of an auth record.
const upsertAuth = `INSERT INTO auth_records (id, record) VALUES ($1, $2)
	ON CONFLICT (id) DO UPDATE SET record = excluded.record`

// SaveAuth implements store.AuthRecords. The payload is stored in the
// auth_records table, which only the roles that may read secrets should
// be granted (see docs/postgres.md), sealed when the store was opened
// with a sealer (see putSealed).
func (s *Store) SaveAuth(ctx context.Context, a store.AuthRecord) (err error) {
	defer wrap(&err, "save auth record %q", a.ID)
	if !store.ValidAuthID(a.ID) {
		return fmt.Errorf("the id is not a valid auth id: %w", store.ErrInvalid)
	}
	return putSealed(ctx, s, "auth_records", upsertAuth, a.ID, a, store.SealAuth)
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
