package store

import (
	"context"
	"fmt"
)

// PutRegistryEntry implements SourceRegistry.
func (m *Memory) PutRegistryEntry(_ context.Context, e RegistryEntry) error {
	c, err := deepCopy(e)
	if err != nil {
		return fmt.Errorf("put registry entry %q: %w", e.ID, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.registry[e.ID] = c
	return nil
}

// GetRegistryEntry implements SourceRegistry.
func (m *Memory) GetRegistryEntry(_ context.Context, id string) (RegistryEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.registry[id]
	if !ok {
		return RegistryEntry{}, fmt.Errorf("get registry entry %q: %w", id, ErrNotFound)
	}
	return deepCopy(e)
}

// ListRegistryEntries implements SourceRegistry.
func (m *Memory) ListRegistryEntries(context.Context) ([]RegistryEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return deepCopy(sortedValues(m.registry))
}

// DeleteRegistryEntry implements SourceRegistry.
func (m *Memory) DeleteRegistryEntry(_ context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.registry[id]
	delete(m.registry, id)
	return ok, nil
}
