package store

import (
	"context"
	"fmt"
)

// SaveAuth implements AuthRecords.
func (m *Memory) SaveAuth(_ context.Context, a AuthRecord) error {
	if !ValidAuthID(a.ID) {
		return fmt.Errorf("save auth record %q: the id is not a valid auth id: %w", a.ID, ErrInvalid)
	}
	c, err := deepCopy(a)
	if err != nil {
		return fmt.Errorf("save auth record %q: %w", a.ID, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.auth[a.ID] = c
	return nil
}

// GetAuth implements AuthRecords.
func (m *Memory) GetAuth(_ context.Context, id string) (AuthRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.auth[id]
	if !ok {
		return AuthRecord{}, fmt.Errorf("get auth record %q: %w", id, ErrNotFound)
	}
	return deepCopy(a)
}

// ListAuth implements AuthRecords.
func (m *Memory) ListAuth(context.Context) ([]AuthRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return deepCopy(sortedValues(m.auth))
}

// DeleteAuth implements AuthRecords.
func (m *Memory) DeleteAuth(_ context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.auth[id]
	delete(m.auth, id)
	return ok, nil
}
