package store

import (
	"context"
	"fmt"
)

// SaveDeployment implements Deployments.
func (m *Memory) SaveDeployment(_ context.Context, d Deployment) error {
	c, err := deepCopy(d)
	if err != nil {
		return fmt.Errorf("save deployment %q: %w", d.ID, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.deployments[d.ID] = c
	return nil
}

// GetDeployment implements Deployments.
func (m *Memory) GetDeployment(_ context.Context, id string) (Deployment, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.deployments[id]
	if !ok {
		return Deployment{}, fmt.Errorf("get deployment %q: %w", id, ErrNotFound)
	}
	return deepCopy(d)
}

// ListDeployments implements Deployments.
func (m *Memory) ListDeployments(context.Context) ([]Deployment, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return deepCopy(sortedValues(m.deployments))
}

// DeleteDeployment implements Deployments.
func (m *Memory) DeleteDeployment(_ context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.deployments[id]
	delete(m.deployments, id)
	return ok, nil
}
