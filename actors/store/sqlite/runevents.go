package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// lastRunEventSQL selects the sequence number of a run's last event, 0
// for none.
const lastRunEventSQL = `SELECT COALESCE(MAX(seq), 0) FROM run_events WHERE run_id = ?`

// The queries of run events.
var (
	lastRunEvent   = newWriteQuery(lastRunEventSQL)
	getRunHead     = newWriteQuery(`SELECT trace_count, record, (` + lastRunEventSQL + `) FROM runs WHERE id = ?`)
	insertRunEvent = newWriteQuery(`INSERT INTO run_events (run_id, seq, record) VALUES (?, ?, ?)`)
	// readRunLastEvent is lastRunEventSQL of a run that exists: no row
	// for one that does not.
	readRunLastEvent = newReadQuery(`SELECT (` + lastRunEventSQL + `) FROM runs WHERE id = ?`)
	readRunEvents    = newReadQuery(`SELECT record FROM run_events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?`)
)

// runHead reads, in tx, what store.NewRunEvents needs of a run's stored
// record (its status, interrupt, calls in flight and trace count) and the
// sequence number of its last event; store.ErrNotFound if there is no run.
func runHead(ctx context.Context, tx writeTx, id string) (store.Run, int64, error) {
	var (
		traceCount int
		record     []byte
		lastSeq    int64
	)
	err := tx.row(ctx, getRunHead, id, id).Scan(&traceCount, &record, &lastSeq)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Run{}, 0, store.ErrNotFound
	}
	if err != nil {
		return store.Run{}, 0, err
	}
	// Only these fields are decoded: the state, input and frames are not.
	var head struct {
		Status     string              `json:"status"`
		Interrupt  *workflow.Interrupt `json:"interrupt"`
		Checkpoint *struct {
			Calls map[string]workflow.Call `json:"calls"`
		} `json:"checkpoint"`
	}
	if err := json.Unmarshal(record, &head); err != nil {
		return store.Run{}, 0, err
	}
	prev := store.Run{ID: id, Status: head.Status, Interrupt: head.Interrupt, TraceCount: traceCount}
	if head.Checkpoint != nil {
		prev.Checkpoint = &workflow.Snapshot{Calls: head.Checkpoint.Calls}
	}
	return prev, lastSeq, nil
}

// appendRunEvents inserts events in tx.
func appendRunEvents(ctx context.Context, tx writeTx, events []store.RunEvent) error {
	for _, e := range events {
		record, err := encode(e)
		if err != nil {
			return err
		}
		if _, err := tx.exec(ctx, insertRunEvent, e.RunID, e.Seq, record); err != nil {
			return err
		}
	}
	return nil
}

// ReadRunEvents implements store.RunEventLog in one read transaction.
func (s *Store) ReadRunEvents(ctx context.Context, runID string, afterSeq int64, limit int) (events []store.RunEvent, last int64, err error) {
	defer wrap(&err, "read events of run %q", runID)
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	err = inTx(ctx, s.read, readOnly, func(tx *sql.Tx) error {
		reads := s.reads.in(tx)
		err := reads.row(ctx, readRunLastEvent, runID, runID).Scan(&last)
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		events, err = getAll[store.RunEvent](ctx, reads, readRunEvents, runID, afterSeq, limit)
		return err
	})
	return events, last, s.missing(ctx, runID, err)
}
