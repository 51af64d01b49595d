package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// The queries of run events.
var (
	getRunHead      = newWriteQuery(`SELECT status, trace_count, interrupt_id, calls_in_flight, last_event FROM runs WHERE id = ?`)
	insertRunEvents = newRowsInsert(`run_events (run_id, seq, record)`, 3)
	// readRunLastEvent is no row for a run that does not exist.
	readRunLastEvent = newReadQuery(`SELECT last_event FROM runs WHERE id = ?`)
	readRunEvents    = newReadQuery(`SELECT seq, record FROM run_events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?`)
	setRunLastEvent  = newWriteQuery(`UPDATE runs SET last_event = ? WHERE id = ?`)
)

// runHead returns, in tx, a run's head (what store.NewRunEvents compares)
// and the sequence number of its last event: the writer's (runHeads), or
// else read from its row's columns, not its record; store.ErrNotFound if
// there is no run.
func (s *Store) runHead(ctx context.Context, tx writeTx, id string) (cachedHead, error) {
	if c, ok := s.writer.heads.get(id); ok {
		return c, nil
	}
	var (
		c     = cachedHead{head: store.RunHead{ID: id}}
		calls []byte
	)
	err := tx.row(ctx, getRunHead, id).Scan(&c.head.Status, &c.head.TraceCount, &c.head.InterruptID, &calls, &c.lastSeq)
	if errors.Is(err, sql.ErrNoRows) {
		return c, store.ErrNotFound
	}
	if err != nil {
		return c, err
	}
	if c.head.Calls, err = decodeCalls(calls); err != nil {
		return c, fmt.Errorf("the calls in flight of run %q: %w", id, err)
	}
	// The last row of its journal, if it has one, is the run's head.
	var (
		record []byte
		last   int64
	)
	err = tx.row(ctx, lastJournalRow, id).Scan(&c.journal, &record, &last)
	if errors.Is(err, sql.ErrNoRows) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	r, err := store.Decoded[store.Run](record, valuesOf(ctx, tx))
	if err != nil {
		return c, err
	}
	c.head, c.lastSeq = store.HeadOf(r), max(c.lastSeq, last)
	return c, nil
}

// appendRunEvents inserts events in tx, as store.EncodeRunEvent keeps
// them, with values, in the statements that insert first the rows whose
// values ahead holds (a folded journal's events, or none).
func appendRunEvents(ctx context.Context, tx writeTx, ahead []any, events []store.RunEvent, values store.Values) error {
	args := slices.Grow(ahead, 3*len(events))
	for _, e := range events {
		record, err := store.EncodeRunEvent(e, values)
		if err != nil {
			return err
		}
		args = append(args, e.RunID, e.Seq, record)
	}
	return insertRunEvents.exec(ctx, tx, args)
}

// AppendRunEvents implements store.RunLiveEvents: in one transaction it
// reads the run's head, numbers the events after its last one, inserts
// them and moves the row's last event. The run's record is not touched.
func (s *Store) AppendRunEvents(ctx context.Context, runID string, events []store.RunEvent) (err error) {
	defer wrap(&err, "append events to run %q", runID)
	if len(events) == 0 {
		return nil
	}
	return s.update(ctx, s.liveEvents(runID, events))
}

// liveEvents is the write of AppendRunEvents.
func (s *Store) liveEvents(runID string, events []store.RunEvent) writeFn {
	return func(ctx context.Context, tx writeTx) error {
		c, err := s.runHead(ctx, tx, runID)
		if err != nil {
			return err
		}
		if store.Terminal(c.head.Status) {
			return fmt.Errorf("it is %s: %w", c.head.Status, store.ErrConflict)
		}
		numbered := store.NumberRunEvents(runID, events, c.lastSeq)
		values := store.Values{}
		if err := appendRunEvents(ctx, tx, nil, numbered, values); err != nil {
			return err
		}
		if err := insertValues(ctx, tx, runID, values); err != nil {
			return err
		}
		lastSeq := numbered[len(numbered)-1].Seq
		if _, err := tx.exec(ctx, setRunLastEvent, lastSeq, runID); err != nil {
			return err
		}
		s.writer.heads.put(c.head, lastSeq, c.journal)
		return nil
	}
}

// ReadRunEvents implements store.RunEventLog in one read transaction.
func (s *Store) ReadRunEvents(ctx context.Context, runID string, afterSeq int64, limit int) (events []store.RunEvent, last int64, err error) {
	defer wrap(&err, "read events of run %q", runID)
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	err = inTx(ctx, s.read, readOnly, func(tx *sql.Tx) error {
		reads := s.reads.in(tx)
		err := reads.row(ctx, readRunLastEvent, runID).Scan(&last)
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		var journalLast int64
		if err := reads.row(ctx, readJournalLast, runID).Scan(&journalLast); err != nil {
			return err
		}
		last = max(last, journalLast)
		stored, err := scanEvents(reads.rows(ctx, readRunEvents, runID, afterSeq, limit))
		if err != nil {
			return err
		}
		var journal []journalRow
		if journalLast > afterSeq {
			if journal, err = scanJournal(reads.rows(ctx, readJournal, runID)); err != nil {
				return err
			}
		}
		texts := mergeEvents(stored, journal, afterSeq, limit)
		events, err = store.DecodeRunEvents(runID, texts,
			func(text []byte) (store.RunEvent, error) {
				return store.Decoded[store.RunEvent](text, valuesOf(ctx, reads))
			},
			func(start, limit int) ([]workflow.TraceEntry, error) {
				return readTrace(ctx, reads, runID, start, limit)
			})
		return err
	})
	return events, last, s.missing(ctx, runID, err)
}
