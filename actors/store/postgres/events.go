package postgres

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/mcpflow/mcpflow/actors/store"
)

// AppendEvent implements store.Events in one transaction (see
// queueEvents).
func (s *Store) AppendEvent(ctx context.Context, e store.Event) (seq int64, err error) {
	defer wrap(&err, "append event %q", e.Kind)
	err = s.update(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		if seq, err = s.queueEvents(ctx, tx, b, e); err != nil {
			return err
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return 0, err
	}
	return seq, nil
}

// queueEvents takes the next len(events) numbers from event_counter in tx
// (appends queue on its row, so they commit in number order and leave no
// gap), and queues in b the events' inserts and the delete of those that
// fall out of the newest maxEvents, which are exactly those up to
// seq - maxEvents. It returns the last event's number; none is 0.
func (s *Store) queueEvents(ctx context.Context, tx pgx.Tx, b *pgx.Batch, events ...store.Event) (seq int64, err error) {
	if len(events) == 0 {
		return 0, nil
	}
	records := make([]string, len(events))
	for i, e := range events {
		e.Seq = 0 // the seq column holds it
		if records[i], err = encode(e); err != nil {
			return 0, err
		}
	}
	n := int64(len(events))
	if err := tx.QueryRow(ctx, `UPDATE event_counter SET last_seq = last_seq + $1 RETURNING last_seq`, n).Scan(&seq); err != nil {
		return 0, err
	}
	b.Queue(`INSERT INTO events (seq, record) SELECT $1 + ord, record FROM unnest($2::text[]) WITH ORDINALITY AS e (record, ord)`, seq-n, records)
	b.Queue(`DELETE FROM events WHERE seq <= $1`, seq-int64(s.maxEvents))
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
