package sqlite

import (
	"context"

	"github.com/mcpflow/mcpflow/actors/store"
)

// The queries of deployments.
var (
	putDeployment    = newWriteQuery(`INSERT INTO deployments (id, record) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET record = excluded.record`)
	deleteDeployment = newWriteQuery(`DELETE FROM deployments WHERE id = ?`)
	getDeployment    = newReadQuery(`SELECT record FROM deployments WHERE id = ?`)
	listDeployments  = newReadQuery(`SELECT record FROM deployments ORDER BY id`)
)

// SaveDeployment implements store.Deployments.
func (s *Store) SaveDeployment(ctx context.Context, d store.Deployment) (err error) {
	defer wrap(&err, "save deployment %q", d.ID)
	return s.upsert(ctx, putDeployment, d.ID, d)
}

// GetDeployment implements store.Deployments.
func (s *Store) GetDeployment(ctx context.Context, id string) (_ store.Deployment, err error) {
	defer wrap(&err, "get deployment %q", id)
	return getOne[store.Deployment](ctx, s.reads, getDeployment, id)
}

// ListDeployments implements store.Deployments.
func (s *Store) ListDeployments(ctx context.Context) (_ []store.Deployment, err error) {
	defer wrap(&err, "list deployments")
	return getAll[store.Deployment](ctx, s.reads, listDeployments)
}

// DeleteDeployment implements store.Deployments.
func (s *Store) DeleteDeployment(ctx context.Context, id string) (_ bool, err error) {
	defer wrap(&err, "delete deployment %q", id)
	return s.deleteOne(ctx, deleteDeployment, id)
}
