package sqlite

import (
	"context"

	"github.com/mcpflow/mcpflow/actors/store"
)

// SaveDeployment implements store.Deployments.
func (s *Store) SaveDeployment(ctx context.Context, d store.Deployment) (err error) {
	defer wrap(&err, "save deployment %q", d.ID)
	return s.upsert(ctx,
		`INSERT INTO deployments (id, record) VALUES (?, ?)
		 ON CONFLICT (id) DO UPDATE SET record = excluded.record`,
		d.ID, d)
}

// GetDeployment implements store.Deployments.
func (s *Store) GetDeployment(ctx context.Context, id string) (_ store.Deployment, err error) {
	defer wrap(&err, "get deployment %q", id)
	return getOne[store.Deployment](ctx, s.read, `SELECT record FROM deployments WHERE id = ?`, id)
}

// ListDeployments implements store.Deployments.
func (s *Store) ListDeployments(ctx context.Context) (_ []store.Deployment, err error) {
	defer wrap(&err, "list deployments")
	return getAll[store.Deployment](ctx, s.read, `SELECT record FROM deployments ORDER BY id`)
}

// DeleteDeployment implements store.Deployments.
func (s *Store) DeleteDeployment(ctx context.Context, id string) (_ bool, err error) {
	defer wrap(&err, "delete deployment %q", id)
	return s.deleteOne(ctx, `DELETE FROM deployments WHERE id = ?`, id)
}
