package sqlite

import (
	"context"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/store"
)

// The queries of auth records.
var (
	putAuth    = newWriteQuery(`INSERT INTO auth_records (id, record) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET record = excluded.record`)
	deleteAuth = newWriteQuery(`DELETE FROM auth_records WHERE id = ?`)
	keptAuth   = newWriteQuery(`SELECT record FROM auth_records ORDER BY id`)
	getAuth    = newReadQuery(`SELECT record FROM auth_records WHERE id = ?`)
	listAuth   = newReadQuery(`SELECT record FROM auth_records ORDER BY id`)
)

// SaveAuth implements store.AuthRecords. The payload is stored in the
// database file, which only its owner may read (see createFile), sealed
// when the store was opened with a sealer (see putSealed).
func (s *Store) SaveAuth(ctx context.Context, a store.AuthRecord) (err error) {
	defer wrap(&err, "save auth record %q", a.ID)
	if !store.ValidAuthID(a.ID) {
		return fmt.Errorf("the id is not a valid auth id: %w", store.ErrInvalid)
	}
	return putSealed(ctx, s, putAuth, a.ID, a, store.SealAuth)
}

// GetAuth implements store.AuthRecords.
func (s *Store) GetAuth(ctx context.Context, id string) (_ store.AuthRecord, err error) {
	defer wrap(&err, "get auth record %q", id)
	a, err := getOne[store.AuthRecord](ctx, s.reads, getAuth, id)
	if err != nil {
		return a, err
	}
	return store.OpenAuth(s.sealer, a)
}

// ListAuth implements store.AuthRecords.
func (s *Store) ListAuth(ctx context.Context) (_ []store.AuthRecord, err error) {
	defer wrap(&err, "list auth records")
	list, err := getAll[store.AuthRecord](ctx, s.reads, listAuth)
	if err != nil {
		return nil, err
	}
	return store.OpenAuths(s.sealer, list)
}

// DeleteAuth implements store.AuthRecords.
func (s *Store) DeleteAuth(ctx context.Context, id string) (_ bool, err error) {
	defer wrap(&err, "delete auth record %q", id)
	return s.deleteOne(ctx, deleteAuth, id)
}
