package store

import (
	"context"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/catalog"
)

// SaveCatalog implements Catalogs.
func (m *Memory) SaveCatalog(_ context.Context, s catalog.Snapshot) error {
	if err := putKeyed(m, m.catalogs, s.ConnectionID, s); err != nil {
		return fmt.Errorf("save catalog %q: %w", s.ConnectionID, err)
	}
	return nil
}

// GetCatalog implements Catalogs.
func (m *Memory) GetCatalog(_ context.Context, connectionID string) (catalog.Snapshot, error) {
	s, err := getKeyed(m, m.catalogs, connectionID)
	if err != nil {
		return catalog.Snapshot{}, fmt.Errorf("get catalog %q: %w", connectionID, err)
	}
	return s, nil
}

// ListCatalogs implements Catalogs.
func (m *Memory) ListCatalogs(context.Context) ([]catalog.Snapshot, error) {
	return listKeyed(m, m.catalogs)
}
