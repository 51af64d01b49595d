package sqlite

import (
	"context"
	"encoding/json"

	"github.com/mcpflow/mcpflow/actors/store"
)

// The queries of the admin event log.
var (
	// insertEvent numbers the event with the row's rowid, which seq is:
	// the insert's result has it, with no rows to read (RETURNING).
	insertEvent  = newWriteQuery(`INSERT INTO events (record) VALUES (?)`)
	trimEvents   = newWriteQuery(`DELETE FROM events WHERE seq <= ?`)
	listEvents   = newReadQuery(`SELECT seq, record FROM events WHERE seq > ? ORDER BY seq LIMIT ?`)
	lastEventSeq = newReadQuery(`SELECT COALESCE(MAX(seq), 0) FROM events`)
)

// AppendEvent implements store.Events: in one transaction it inserts the
// event and deletes those that fall out of the newest maxEvents. An event
// is numbered the greatest kept plus one (seq is the table's rowid), and
// the newest is always kept, so no number is reused; nor is one skipped
// (the writer is one connection, and an insert rolled back, to its
// savepoint or with its batch, leaves no row), so the events kept are
// exactly those after seq - maxEvents.
func (s *Store) AppendEvent(ctx context.Context, e store.Event) (seq int64, err error) {
	defer wrap(&err, "append event %q", e.Kind)
	err = s.update(ctx, func(ctx context.Context, tx writeTx) error {
		seq, err = s.appendEvent(ctx, tx, e)
		return err
	})
	if err != nil {
		return 0, err
	}
	return seq, nil
}

// appendEvent inserts e in tx, deletes the events that fall out of the
// newest maxEvents, and returns e's sequence number.
func (s *Store) appendEvent(ctx context.Context, tx writeTx, e store.Event) (seq int64, err error) {
	e.Seq = 0 // the seq column holds it
	record, err := encode(e)
	if err != nil {
		return 0, err
	}
	res, err := tx.exec(ctx, insertEvent, record)
	if err != nil {
		return 0, err
	}
	if seq, err = res.LastInsertId(); err != nil {
		return 0, err
	}
	if seq > int64(s.maxEvents) { // else every event ever appended is kept
		_, err = tx.exec(ctx, trimEvents, seq-int64(s.maxEvents))
	}
	return seq, err
}

// ListEvents implements store.Events.
func (s *Store) ListEvents(ctx context.Context, afterSeq int64, limit int) (_ []store.Event, err error) {
	defer wrap(&err, "list events")
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := s.reads.rows(ctx, listEvents, afterSeq, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []store.Event{}
	for rows.Next() {
		var seq int64
		var record []byte
		if err := rows.Scan(&seq, &record); err != nil {
			return nil, err
		}
		var e store.Event
		if err := json.Unmarshal(record, &e); err != nil {
			return nil, err
		}
		e.Seq = seq
		list = append(list, e)
	}
	return list, rows.Err()
}

// LastEventSeq implements store.Events: retention keeps the newest event,
// so the greatest sequence number kept is the last one appended.
func (s *Store) LastEventSeq(ctx context.Context) (last int64, err error) {
	defer wrap(&err, "read the last event's sequence number")
	err = s.reads.row(ctx, lastEventSeq).Scan(&last)
	return last, err
}
