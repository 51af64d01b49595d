package sqlite

import (
	"context"

	"github.com/mcpflow/mcpflow/actors/store"
)

// The queries of the source registry.
var (
	putRegistryEntry    = newWriteQuery(`INSERT INTO source_registry (id, record) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET record = excluded.record`)
	deleteRegistryEntry = newWriteQuery(`DELETE FROM source_registry WHERE id = ?`)
	keptRegistryEntries = newWriteQuery(`SELECT record FROM source_registry ORDER BY id`)
	getRegistryEntry    = newReadQuery(`SELECT record FROM source_registry WHERE id = ?`)
	listRegistryEntries = newReadQuery(`SELECT record FROM source_registry ORDER BY id`)
)

// PutRegistryEntry implements store.SourceRegistry. The secret values of
// the entry's transport are sealed when the store was opened with a
// sealer (see putSealed).
func (s *Store) PutRegistryEntry(ctx context.Context, e store.RegistryEntry) (err error) {
	defer wrap(&err, "put registry entry %q", e.ID)
	return putSealed(ctx, s, putRegistryEntry, e.ID, e, store.SealEntry)
}

// GetRegistryEntry implements store.SourceRegistry.
func (s *Store) GetRegistryEntry(ctx context.Context, id string) (_ store.RegistryEntry, err error) {
	defer wrap(&err, "get registry entry %q", id)
	e, err := getOne[store.RegistryEntry](ctx, s.reads, getRegistryEntry, id)
	if err != nil {
		return e, err
	}
	return store.OpenEntry(s.sealer, e)
}

// ListRegistryEntries implements store.SourceRegistry.
func (s *Store) ListRegistryEntries(ctx context.Context) (_ []store.RegistryEntry, err error) {
	defer wrap(&err, "list registry entries")
	list, err := getAll[store.RegistryEntry](ctx, s.reads, listRegistryEntries)
	if err != nil {
		return nil, err
	}
	return store.OpenEntries(s.sealer, list)
}

// DeleteRegistryEntry implements store.SourceRegistry.
func (s *Store) DeleteRegistryEntry(ctx context.Context, id string) (_ bool, err error) {
	defer wrap(&err, "delete registry entry %q", id)
	return s.deleteOne(ctx, deleteRegistryEntry, id)
}
