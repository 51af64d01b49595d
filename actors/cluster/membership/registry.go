package membership

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// nodeKeyPrefix begins the key of every node lease.
const nodeKeyPrefix = "node/"

// NodeKey is the key of the lease that keeps node id a member: the node
// holds it while it runs, and is a member while the lease is live.
func NodeKey(id string) string { return nodeKeyPrefix + id }

// Member is a node of the cluster and where to reach it.
type Member struct {
	NodeID string
	// ClusterAddress is the host:port of its actor remote.
	ClusterAddress string
	// HTTPAddress is the host:port of its edge; "" when unknown.
	HTTPAddress string
}

// Status is a registered member as read from the database, with its node
// lease judged at the database's time of the read.
type Status struct {
	Member
	// StartedAt is when the node last registered, as it started, and
	// UpdatedAt when its row last changed: the database's times.
	StartedAt time.Time
	UpdatedAt time.Time
	// Live says whether its node lease was live; Epoch is the lease's
	// tenure (0 when the node never held one) and Remaining its time
	// left (0 unless live).
	Live      bool
	Epoch     int64
	Remaining time.Duration
}

// Registry is the cluster_members table of the cluster's database (the
// postgres store's migration 3 creates it): where each node says how to
// reach it. Whether a member is live is its node lease's business (the
// leases table): the Registry only reads the leases, for the members and
// for a status. It is safe for concurrent use.
type Registry struct {
	pool *pgxpool.Pool
}

// NewRegistry returns the registry of pool's database.
func NewRegistry(pool *pgxpool.Pool) *Registry { return &Registry{pool: pool} }

// registerSQL writes a member's row as its node starts ($1 node id, $2
// cluster address, $3 HTTP address).
const registerSQL = `
INSERT INTO cluster_members AS m (node_id, cluster_address, http_address, started_at, updated_at)
SELECT $1, $2, $3, t.now, t.now FROM (SELECT clock_timestamp() AS now) AS t
ON CONFLICT (node_id) DO UPDATE SET
	cluster_address = excluded.cluster_address,
	http_address = excluded.http_address,
	started_at = excluded.started_at,
	updated_at = excluded.updated_at`

// Register writes m's row, as its node does when it starts: its
// addresses, started and updated now by the database's clock. It does not
// make m live: its node lease does.
func (r *Registry) Register(ctx context.Context, m Member) error {
	switch {
	case m.NodeID == "":
		return errors.New("register a member: the node id is empty")
	case m.ClusterAddress == "":
		return fmt.Errorf("register member %q: the cluster address is empty", m.NodeID)
	}
	if _, err := r.pool.Exec(ctx, registerSQL, m.NodeID, m.ClusterAddress, m.HTTPAddress); err != nil {
		return fmt.Errorf("register member %q: %w", m.NodeID, err)
	}
	return nil
}

// Update changes the addresses of a registered member, m.NodeID, and
// its updated_at, keeping its started_at: a node that learns its HTTP
// address after it registered, say.
func (r *Registry) Update(ctx context.Context, m Member) error {
	if m.ClusterAddress == "" {
		return fmt.Errorf("update member %q: the cluster address is empty", m.NodeID)
	}
	tag, err := r.pool.Exec(ctx, `UPDATE cluster_members SET cluster_address = $2, http_address = $3, updated_at = clock_timestamp()
		WHERE node_id = $1`, m.NodeID, m.ClusterAddress, m.HTTPAddress)
	switch {
	case err != nil:
		return fmt.Errorf("update member %q: %w", m.NodeID, err)
	case tag.RowsAffected() == 0:
		return fmt.Errorf("update member %q: it is not registered", m.NodeID)
	}
	return nil
}

// statusSQL reads the members with their node leases ($1 nodeKeyPrefix),
// judged at the statement's database time.
const statusSQL = `
SELECT m.node_id, m.cluster_address, m.http_address, m.started_at, m.updated_at,
	COALESCE(l.expires_at > statement_timestamp(), false), COALESCE(l.epoch, 0),
	GREATEST(COALESCE(l.expires_at, statement_timestamp()) - statement_timestamp(), interval '0')
FROM cluster_members AS m LEFT JOIN leases AS l ON l.key = $1::text || m.node_id`

// Live reads the registered members whose node lease is live, in the
// order of their ids' bytes.
func (r *Registry) Live(ctx context.Context) ([]Status, error) {
	list, err := r.read(ctx, statusSQL+` WHERE l.expires_at > statement_timestamp() ORDER BY m.node_id`)
	if err != nil {
		return nil, fmt.Errorf("read the live members: %w", err)
	}
	return list, nil
}

// All reads every registered member, live or not, in the order of their
// ids' bytes.
func (r *Registry) All(ctx context.Context) ([]Status, error) {
	list, err := r.read(ctx, statusSQL+` ORDER BY m.node_id`)
	if err != nil {
		return nil, fmt.Errorf("read the members: %w", err)
	}
	return list, nil
}

// read runs a query of statusSQL.
func (r *Registry) read(ctx context.Context, sql string) ([]Status, error) {
	rows, err := r.pool.Query(ctx, sql, nodeKeyPrefix)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Status, error) {
		var s Status
		err := row.Scan(&s.NodeID, &s.ClusterAddress, &s.HTTPAddress, &s.StartedAt, &s.UpdatedAt, &s.Live, &s.Epoch, &s.Remaining)
		return s, err
	})
}

// LiveNodes says which of the nodes ids hold a live node lease, whether
// registered or not, in the order of their ids' bytes.
func (r *Registry) LiveNodes(ctx context.Context, ids []string) ([]string, error) {
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = NodeKey(id)
	}
	rows, err := r.pool.Query(ctx, `SELECT substr(key, length($2::text) + 1) FROM leases
		WHERE key = ANY($1) AND expires_at > statement_timestamp() ORDER BY key`, keys, nodeKeyPrefix)
	if err != nil {
		return nil, fmt.Errorf("read the node leases: %w", err)
	}
	live, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("read the node leases: %w", err)
	}
	return live, nil
}
