package sqlite

import (
	"context"

	"github.com/mcpflow/mcpflow/actors/catalog"
)

// The queries of catalogs.
var (
	putCatalog = newWriteQuery(`INSERT INTO catalogs (connection_id, record) VALUES (?, ?)
		ON CONFLICT (connection_id) DO UPDATE SET record = excluded.record`)
	getCatalog   = newReadQuery(`SELECT record FROM catalogs WHERE connection_id = ?`)
	listCatalogs = newReadQuery(`SELECT record FROM catalogs ORDER BY connection_id`)
)

// SaveCatalog implements store.Catalogs.
func (s *Store) SaveCatalog(ctx context.Context, snap catalog.Snapshot) (err error) {
	defer wrap(&err, "save catalog %q", snap.ConnectionID)
	return s.upsert(ctx, putCatalog, snap.ConnectionID, snap)
}

// GetCatalog implements store.Catalogs.
func (s *Store) GetCatalog(ctx context.Context, connectionID string) (_ catalog.Snapshot, err error) {
	defer wrap(&err, "get catalog %q", connectionID)
	return getOne[catalog.Snapshot](ctx, s.reads, getCatalog, connectionID)
}

// ListCatalogs implements store.Catalogs.
func (s *Store) ListCatalogs(ctx context.Context) (_ []catalog.Snapshot, err error) {
	defer wrap(&err, "list catalogs")
	return getAll[catalog.Snapshot](ctx, s.reads, listCatalogs)
}
