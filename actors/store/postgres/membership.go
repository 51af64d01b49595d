package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mcpflow/mcpflow/actors/store"
)

// memberFence is a store's Membership (WithMembership) as the SQL its
// writes run.
type memberFence struct {
	key string
	// insertRun is insertRun done only while the node holds its lease
	// ($14 the key, $15 the node), in one statement that says whether it
	// did and whether the run was inserted.
	insertRun string
	// held is the lease's query alone ($1 the key, $2 the node).
	held string
}

// newMemberFence returns the fence of node's store on its membership m;
// nil without one.
func newMemberFence(m *Membership, node string) (*memberFence, error) {
	switch {
	case m == nil:
		return nil, nil
	case node == "":
		return nil, errors.New("a store fenced on a cluster membership needs its node (WithNode)")
	case m.Key == "" || m.Held == nil:
		return nil, errors.New("a store's cluster membership needs the key of the node's lease and the lease's query")
	}
	return &memberFence{
		key: m.Key,
		insertRun: `WITH member AS (` + m.Held("$14::text", "$15::text") + `),
run AS (
	INSERT INTO runs (` + runColumns + `)
	SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 FROM member ON CONFLICT DO NOTHING RETURNING id
),
events AS (
` + insertFirstEvents + `
)
SELECT EXISTS (SELECT FROM member), EXISTS (SELECT FROM run)`,
		held: m.Held("$1::text", "$2::text"),
	}, nil
}

// insert runs insertRun with args ($1 to $13) in tx, fenced on the
// membership of node when f is set: store.ErrNotMember when the node does
// not hold its lease, store.ErrExists when the run's id is taken.
func (f *memberFence) insert(ctx context.Context, tx pgx.Tx, node string, args []any) error {
	if f == nil {
		return insertNew(ctx, tx, insertRun, args...)
	}
	var member, inserted bool
	if err := tx.QueryRow(ctx, f.insertRun, append(args, f.key, node)...).Scan(&member, &inserted); err != nil {
		return err
	}
	switch {
	case !member:
		return notMember(node)
	case !inserted:
		return store.ErrExists
	}
	return nil
}

// check returns store.ErrNotMember unless node holds its lease, which it
// then keeps until tx ends; nil when f is not set.
func (f *memberFence) check(ctx context.Context, tx pgx.Tx, node string) error {
	if f == nil {
		return nil
	}
	rows, err := tx.Query(ctx, f.held, f.key, node)
	if err != nil {
		return err
	}
	held := rows.Next()
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if !held {
		return notMember(node)
	}
	return nil
}

// notMember is the error of a write refused because node's membership
// lapsed.
func notMember(node string) error {
	return fmt.Errorf("node %q does not hold its membership lease: other nodes may have claimed its runs, and it takes no new one until it has rejoined the cluster: %w",
		node, store.ErrNotMember)
}
