package postgres

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/mcpflow/mcpflow/actors/store"
)

// AppendEvent implements store.Events: in one transaction it takes the
// next number from event_counter (appends queue on its row, so they
// commit in number order and leave no gap), inserts the event and deletes
// those that fall out of the newest maxEvents, which are exactly those up
// to seq - maxEvents.
func (s *Store) AppendEvent(ctx context.Context, e store.Event) (seq int64, err error) {
	defer wrap(&err, "append event %q", e.Kind)
	e.Seq = 0 // the seq column holds it
	record, err := encode(e)
	if err != nil {
		return 0, err
	}
	err = s.update(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `UPDATE event_counter SET last_seq = last_seq + 1 RETURNING last_seq`).Scan(&seq); err != nil {
			return err
		}
		b := &pgx.Batch{}
		b.Queue(`INSERT INTO events (seq, record) VALUES ($1, $2)`, seq, record)
		b.Queue(`DELETE FROM events WHERE seq <= $1`, seq-int64(s.maxEvents))
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return 0, err
	}
	return seq, nil
}

// ListEvents implements store.Events.
func (s *Store) ListEvents(ctx context.Context, afterSeq int64, limit int) (_ []store.Event, err error) {
	defer wrap(&err, "list events")
	rows, err := s.pool.Query(ctx,
		`SELECT seq, record FROM events WHERE seq > $1 ORDER BY seq LIMIT $2`, afterSeq, limitArg(limit))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Event, error) {
		var e store.Event
		var seq int64
		var record []byte
		if err := row.Scan(&seq, &record); err != nil {
			return e, err
		}
		err := json.Unmarshal(record, &e)
		e.Seq = seq
		return e, err
	})
}

// LastEventSeq implements store.Events.
func (s *Store) LastEventSeq(ctx context.Context) (last int64, err error) {
	defer wrap(&err, "read the last event's sequence number")
	err = s.pool.QueryRow(ctx, `SELECT last_seq FROM event_counter`).Scan(&last)
	return last, err
}
