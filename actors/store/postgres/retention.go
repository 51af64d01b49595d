package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpflow/mcpflow/actors/store"
)

// selectExpired locks the runs that expired at or before $1, soonest
// first, at most $2 of them, skipping those another transaction has
// locked: a node pruning at the same time as another takes other runs.
const selectExpired = `SELECT id, trace_count FROM runs WHERE expires_at <= $1
	ORDER BY expires_at, id LIMIT $2 FOR UPDATE SKIP LOCKED`

// pruneRuns deletes the runs $1 (their trace and events go with them: ON
// DELETE CASCADE) and leaves a tombstone for each, pruned at $2.
const pruneRuns = `WITH pruned AS (DELETE FROM runs WHERE id = ANY($1) RETURNING id)
	INSERT INTO run_tombstones (run_id, pruned_at) SELECT id, $2 FROM pruned
	ON CONFLICT (run_id) DO UPDATE SET pruned_at = excluded.pruned_at`

// PruneRuns implements store.RunRetention in one transaction: it locks
// the expired runs within limit, then deletes them and leaves their
// tombstones in one statement. Each call is one short transaction, whose
// dead rows autovacuum reclaims behind it (the tables' scale factor is
// 5%, see migration 0005); several nodes pruning at once lock disjoint
// runs.
func (s *Store) PruneRuns(ctx context.Context, now time.Time, limit store.PruneLimit) (pruned int, err error) {
	defer wrap(&err, "prune runs")
	err = s.update(ctx, func(tx pgx.Tx) error {
		ids, err := expired(ctx, tx, now, limit)
		if err != nil || len(ids) == 0 {
			return err
		}
		tag, err := tx.Exec(ctx, pruneRuns, ids, now)
		pruned = int(tag.RowsAffected())
		return err
	})
	return pruned, err
}

// expired locks, in tx, the runs that expired at or before now, soonest
// first, within limit, and returns their ids. The rows locked past the
// limit's rows bound are released when tx ends.
func expired(ctx context.Context, tx pgx.Tx, now time.Time, limit store.PruneLimit) ([]string, error) {
	rows, err := tx.Query(ctx, selectExpired, now, limit.Runs)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return store.PruneIDs(rows, limit)
}

// DropTombstones implements store.RunRetention.
func (s *Store) DropTombstones(ctx context.Context, before time.Time, limit int) (_ int, err error) {
	defer wrap(&err, "drop tombstones")
	tag, err := s.pool.Exec(ctx, `DELETE FROM run_tombstones WHERE run_id IN
		(SELECT run_id FROM run_tombstones WHERE pruned_at < $1 ORDER BY pruned_at LIMIT $2 FOR UPDATE SKIP LOCKED)`, before, limit)
	return int(tag.RowsAffected()), err
}

// ReclaimSpace implements store.RunRetention: autovacuum reclaims
// PostgreSQL's dead rows for reuse by itself.
func (s *Store) ReclaimSpace(context.Context) (bool, error) { return false, nil }

// StoreSize implements store.RunRetention: the size of the database.
func (s *Store) StoreSize(ctx context.Context) (size int64, err error) {
	defer wrap(&err, "store size")
	err = s.pool.QueryRow(ctx, `SELECT pg_database_size(current_database())`).Scan(&size)
	return size, err
}

// missing turns err, when it is store.ErrNotFound for run id, into
// store.ErrPruned if retention pruned that run (its tombstone is kept).
func (s *Store) missing(ctx context.Context, id string, err error) error {
	if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	var pruned bool
	if terr := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM run_tombstones WHERE run_id = $1)`, id).Scan(&pruned); terr != nil {
		return errors.Join(err, terr)
	}
	if pruned {
		return store.ErrPruned
	}
	return err
}
