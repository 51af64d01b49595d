package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/mcpflow/mcpflow/actors/store"
)

// ReadRunEvents implements store.RunEventLog in one snapshot.
func (s *Store) ReadRunEvents(ctx context.Context, runID string, afterSeq int64, limit int) (events []store.RunEvent, last int64, err error) {
	defer wrap(&err, "read events of run %q", runID)
	err = inTx(ctx, s.pool, snapshot, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT last_event FROM runs WHERE id = $1`, runID).Scan(&last)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		events, err = getAll[store.RunEvent](ctx, tx,
			`SELECT record FROM run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, runID, afterSeq, limitArg(limit))
		return err
	})
	return events, last, s.missing(ctx, runID, err)
}
