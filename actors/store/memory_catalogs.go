package store

import (
	"context"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/catalog"
)

// SaveCatalog implements Catalogs.
func (m *Memory) SaveCatalog(_ context.Context, s catalog.Snapshot) error {
	c, err := deepCopy(s)
	if err != nil {
		return fmt.Errorf("save catalog %q: %w", s.ConnectionID, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.catalogs[s.ConnectionID] = c
	return nil
}

// GetCatalog implements Catalogs.
func (m *Memory) GetCatalog(_ context.Context, connectionID string) (catalog.Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.catalogs[connectionID]
	if !ok {
		return catalog.Snapshot{}, fmt.Errorf("get catalog %q: %w", connectionID, ErrNotFound)
	}
	return deepCopy(s)
}

// ListCatalogs implements Catalogs.
func (m *Memory) ListCatalogs(context.Context) ([]catalog.Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return deepCopy(sortedValues(m.catalogs))
}
