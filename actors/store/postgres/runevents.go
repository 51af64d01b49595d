package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// ReadRunEvents implements store.RunEventLog in one snapshot, which
// folds the run's events with its journal's.
func (s *Store) ReadRunEvents(ctx context.Context, runID string, afterSeq int64, limit int) (events []store.RunEvent, last int64, err error) {
	defer wrap(&err, "read events of run %q", runID)
	err = inTx(ctx, s.pool, snapshot, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT `+journalLastEvent+` FROM runs WHERE id = $1`, runID).Scan(&last)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, selectRunEvents, runID, afterSeq, limitArg(limit))
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

// AppendRunEvents implements store.RunLiveEvents: in one transaction it
// locks the run's row and checks it (fenced as RecordProgress is: a run
// another node has is that node's), then appends the events after the
// last one (the row's or its journal's) to run_events and moves the
// row's last event, in one round trip. The journal is left as it is.
func (s *Store) AppendRunEvents(ctx context.Context, runID string, events []store.RunEvent) (err error) {
	defer wrap(&err, "append events to run %q", runID)
	if len(events) == 0 {
		return nil
	}
	var numbered []store.RunEvent
	err = s.commit(ctx, func(tx pgx.Tx, b *pgx.Batch) ([]store.Event, error) {
		prev, err := lockRun(ctx, tx, runID)
		if err != nil {
			return nil, err
		}
		if prev.node != s.node && prev.head.Status != store.RunInterrupted {
			return nil, fmt.Errorf("node %q has it (%s), not node %q: %w", prev.node, prev.head.Status, s.node, store.ErrFenced)
		}
		if store.Terminal(prev.head.Status) {
			return nil, fmt.Errorf("it is %s: %w", prev.head.Status, store.ErrConflict)
		}
		numbered = store.NumberRunEvents(runID, events, prev.lastEvent)
		values := store.Values{}
		seqs, records, err := eventArgs(numbered, values)
		if err != nil {
			return nil, err
		}
		b.Queue(insertRunEvents, runID, seqs, records)
		b.Queue(`UPDATE runs SET last_event = $1 WHERE id = $2`, seqs[len(seqs)-1], runID)
		return nil, queueValues(ctx, tx, b, runID, values)
	})
	if err == nil {
		s.announceRun(runID, numbered)
	}
	return err
}
