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
	if err := putKeyed(m, m.auth, a.ID, a); err != nil {
		return fmt.Errorf("save auth record %q: %w", a.ID, err)
	}
	return nil
}

// GetAuth implements AuthRecords.
func (m *Memory) GetAuth(_ context.Context, id string) (AuthRecord, error) {
	a, err := getKeyed(m, m.auth, id)
	if err != nil {
		return AuthRecord{}, fmt.Errorf("get auth record %q: %w", id, err)
	}
	return a, nil
}

// ListAuth implements AuthRecords.
func (m *Memory) ListAuth(context.Context) ([]AuthRecord, error) {
	return listKeyed(m, m.auth)
}

// DeleteAuth implements AuthRecords.
func (m *Memory) DeleteAuth(_ context.Context, id string) (bool, error) {
	return deleteKeyed(m, m.auth, id), nil
}
