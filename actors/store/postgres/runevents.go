package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
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
		rows, err := tx.Query(ctx, `SELECT record FROM run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, runID, afterSeq, limitArg(limit))
		if err != nil {
			return err
		}
		texts, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
		if err != nil {
			return err
		}
		events, err = store.DecodeRunEvents(runID, texts,
			func(text []byte) (store.RunEvent, error) {
				return store.Decoded[store.RunEvent](text, valuesOf(ctx, tx))
			},
			func(start, limit int) ([]workflow.TraceEntry, error) { return readTrace(ctx, tx, runID, start, limit) })
		return err
	})
	return events, last, s.missing(ctx, runID, err)
}
