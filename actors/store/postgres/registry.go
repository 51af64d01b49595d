package postgres

import (
	"context"

	"github.com/mcpflow/mcpflow/actors/store"
)

// upsertRegistryEntry is the upsert of a source registry entry.
const upsertRegistryEntry = `INSERT INTO source_registry (id, record) VALUES ($1, $2)
	ON CONFLICT (id) DO UPDATE SET record = excluded.record`

// PutRegistryEntry implements store.SourceRegistry. The secret values of
// the entry's transport are sealed when the store was opened with a
// sealer (see putSealed).
func (s *Store) PutRegistryEntry(ctx context.Context, e store.RegistryEntry) (err error) {
	defer wrap(&err, "put registry entry %q", e.ID)
	return putSealed(ctx, s, "source_registry", upsertRegistryEntry, e.ID, e, store.SealEntry)
}

// GetRegistryEntry implements store.SourceRegistry.
func (s *Store) GetRegistryEntry(ctx context.Context, id string) (_ store.RegistryEntry, err error) {
	defer wrap(&err, "get registry entry %q", id)
	e, err := getOne[store.RegistryEntry](ctx, s.pool, `SELECT record FROM source_registry WHERE id = $1`, id)
	if err != nil {
		return e, err
	}
	return store.OpenEntry(s.sealer, e)
}

// ListRegistryEntries implements store.SourceRegistry.
func (s *Store) ListRegistryEntries(ctx context.Context) (_ []store.RegistryEntry, err error) {
	defer wrap(&err, "list registry entries")
	list, err := getAll[store.RegistryEntry](ctx, s.pool, `SELECT record FROM source_registry ORDER BY id`)
	if err != nil {
		return nil, err
	}
	return store.OpenEntries(s.sealer, list)
}

// DeleteRegistryEntry implements store.SourceRegistry.
func (s *Store) DeleteRegistryEntry(ctx context.Context, id string) (_ bool, err error) {
	defer wrap(&err, "delete registry entry %q", id)
	return s.deleteOne(ctx, `DELETE FROM source_registry WHERE id = $1`, id)
}
