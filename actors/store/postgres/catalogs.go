package postgres

import (
	"context"

	"github.com/mcpflow/mcpflow/actors/catalog"
)

// upsertCatalog is the upsert of a catalog snapshot.
const upsertCatalog = `INSERT INTO catalogs (connection_id, record) VALUES ($1, $2)
	ON CONFLICT (connection_id) DO UPDATE SET record = excluded.record`

// SaveCatalog implements store.Catalogs.
func (s *Store) SaveCatalog(ctx context.Context, snap catalog.Snapshot) (err error) {
	defer wrap(&err, "save catalog %q", snap.ConnectionID)
	return s.announced(upsert(ctx, s.pool, upsertCatalog, snap.ConnectionID, snap), ChangeCatalog, snap.ConnectionID)
}

// GetCatalog implements store.Catalogs.
func (s *Store) GetCatalog(ctx context.Context, connectionID string) (_ catalog.Snapshot, err error) {
	defer wrap(&err, "get catalog %q", connectionID)
	return getOne[catalog.Snapshot](ctx, s.pool, `SELECT record FROM catalogs WHERE connection_id = $1`, connectionID)
}

// ListCatalogs implements store.Catalogs.
func (s *Store) ListCatalogs(ctx context.Context) (_ []catalog.Snapshot, err error) {
	defer wrap(&err, "list catalogs")
	return getAll[catalog.Snapshot](ctx, s.pool, `SELECT record FROM catalogs ORDER BY connection_id`)
}
