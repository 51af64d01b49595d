package store

import (
	"context"
	"fmt"
)

// CreateWorkspace implements Workspaces.
func (m *Memory) CreateWorkspace(_ context.Context, w Workspace) error {
	c, err := deepCopy(w)
	if err != nil {
		return fmt.Errorf("create workspace %q: %w", w.ID, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.workspaces[w.ID]; ok {
		return fmt.Errorf("create workspace %q: %w", w.ID, ErrExists)
	}
	m.workspaces[w.ID] = c
	return nil
}

// GetWorkspace implements Workspaces.
func (m *Memory) GetWorkspace(_ context.Context, id string) (Workspace, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w, ok := m.workspaces[id]
	if !ok {
		return Workspace{}, fmt.Errorf("get workspace %q: %w", id, ErrNotFound)
	}
	return deepCopy(w)
}

// UpdateWorkspace implements Workspaces.
func (m *Memory) UpdateWorkspace(_ context.Context, w Workspace, expectedRevision int) error {
	c, err := deepCopy(w)
	if err != nil {
		return fmt.Errorf("update workspace %q: %w", w.ID, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	stored, ok := m.workspaces[w.ID]
	if !ok {
		return fmt.Errorf("update workspace %q: %w", w.ID, ErrNotFound)
	}
	if stored.Revision != expectedRevision {
		return fmt.Errorf("update workspace %q: revision is %d, not %d: %w", w.ID, stored.Revision, expectedRevision, ErrConflict)
	}
	m.workspaces[w.ID] = c
	return nil
}

// ListWorkspaces implements Workspaces.
func (m *Memory) ListWorkspaces(context.Context) ([]Workspace, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return deepCopy(sortedValues(m.workspaces))
}

// DeleteWorkspace implements Workspaces.
func (m *Memory) DeleteWorkspace(_ context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.workspaces[id]
	delete(m.workspaces, id)
	return ok, nil
}
