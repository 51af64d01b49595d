package membership

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mcpflow/mcpflow/actors/cluster/lease"
)

// LeaseStatus is a lease of the cluster as a status shows it: the lease,
// judged at the database's time of the read, and the last session
// generation opened under its key (lease.Table.NextGeneration).
type LeaseStatus struct {
	lease.Status
	Generation int64
}

// Leases reads every lease of the cluster, node leases included, live or
// not, in the order of their keys' bytes: what `mcpflow cluster status`
// shows beside the members.
func (r *Registry) Leases(ctx context.Context) ([]LeaseStatus, error) {
	rows, err := r.pool.Query(ctx, `SELECT key, owner, epoch, renewed_at, expires_at, expires_at > statement_timestamp(),
		GREATEST(expires_at - statement_timestamp(), interval '0'), generation FROM leases ORDER BY key`)
	if err != nil {
		return nil, fmt.Errorf("read the leases: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (LeaseStatus, error) {
		var l LeaseStatus
		err := row.Scan(&l.Key, &l.Owner, &l.Epoch, &l.RenewedAt, &l.ExpiresAt, &l.Live, &l.Remaining, &l.Generation)
		return l, err
	})
	if err != nil {
		return nil, fmt.Errorf("read the leases: %w", err)
	}
	return list, nil
}
