package postgres

import (
	"context"

	"github.com/mcpflow/mcpflow/actors/store"
)

// upsertDeployment is the upsert of a deployment.
const upsertDeployment = `INSERT INTO deployments (id, record) VALUES ($1, $2)
	ON CONFLICT (id) DO UPDATE SET record = excluded.record`

// SaveDeployment implements store.Deployments.
func (s *Store) SaveDeployment(ctx context.Context, d store.Deployment) (err error) {
	defer wrap(&err, "save deployment %q", d.ID)
	return s.announced(upsert(ctx, s.pool, upsertDeployment, d.ID, d), ChangeRecords, "")
}

// GetDeployment implements store.Deployments.
func (s *Store) GetDeployment(ctx context.Context, id string) (_ store.Deployment, err error) {
	defer wrap(&err, "get deployment %q", id)
	return getOne[store.Deployment](ctx, s.pool, `SELECT record FROM deployments WHERE id = $1`, id)
}

// ListDeployments implements store.Deployments.
func (s *Store) ListDeployments(ctx context.Context) (_ []store.Deployment, err error) {
	defer wrap(&err, "list deployments")
	return getAll[store.Deployment](ctx, s.pool, `SELECT record FROM deployments ORDER BY id`)
}

// DeleteDeployment implements store.Deployments.
func (s *Store) DeleteDeployment(ctx context.Context, id string) (_ bool, err error) {
	defer wrap(&err, "delete deployment %q", id)
	deleted, err := s.deleteOne(ctx, `DELETE FROM deployments WHERE id = $1`, id)
	return deleted, s.announced(err, ChangeRecords, "")
}
