package store

import (
	"context"
	"fmt"
)

// PutRegistryEntry implements SourceRegistry.
func (m *Memory) PutRegistryEntry(_ context.Context, e RegistryEntry) error {
	if err := putKeyed(m, m.registry, e.ID, e); err != nil {
		return fmt.Errorf("put registry entry %q: %w", e.ID, err)
	}
	return nil
}

// GetRegistryEntry implements SourceRegistry.
func (m *Memory) GetRegistryEntry(_ context.Context, id string) (RegistryEntry, error) {
	e, err := getKeyed(m, m.registry, id)
	if err != nil {
		return RegistryEntry{}, fmt.Errorf("get registry entry %q: %w", id, err)
	}
	return e, nil
}

// ListRegistryEntries implements SourceRegistry.
func (m *Memory) ListRegistryEntries(context.Context) ([]RegistryEntry, error) {
	return listKeyed(m, m.registry)
}

// DeleteRegistryEntry implements SourceRegistry.
func (m *Memory) DeleteRegistryEntry(_ context.Context, id string) (bool, error) {
	return deleteKeyed(m, m.registry, id), nil
}
