package store

import (
	"context"
	"fmt"
)

// SaveDeployment implements Deployments.
func (m *Memory) SaveDeployment(_ context.Context, d Deployment) error {
	if err := putKeyed(m, m.deployments, d.ID, d); err != nil {
		return fmt.Errorf("save deployment %q: %w", d.ID, err)
	}
	return nil
}

// GetDeployment implements Deployments.
func (m *Memory) GetDeployment(_ context.Context, id string) (Deployment, error) {
	d, err := getKeyed(m, m.deployments, id)
	if err != nil {
		return Deployment{}, fmt.Errorf("get deployment %q: %w", id, err)
	}
	return d, nil
}

// ListDeployments implements Deployments.
func (m *Memory) ListDeployments(context.Context) ([]Deployment, error) {
	return listKeyed(m, m.deployments)
}

// DeleteDeployment implements Deployments.
func (m *Memory) DeleteDeployment(_ context.Context, id string) (bool, error) {
	return deleteKeyed(m, m.deployments, id), nil
}
