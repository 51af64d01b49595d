package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// The queries of runs and their traces. A run's row keeps, next to its
// record, its head (store.RunHead: status, trace_count, interrupt_id,
// calls_in_flight) and the sequence number of its last event, which a
// commit reads instead of the record.
var (
	insertRun = newWriteQuery(`INSERT INTO runs (status, updated_at, trace_count, record, expires_at, interrupt_id, calls_in_flight, last_event, id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`)
	updateRun = newWriteQuery(`UPDATE runs SET status = ?, updated_at = ?, trace_count = ?, record = ?, expires_at = ?,
		interrupt_id = ?, calls_in_flight = ?, last_event = ? WHERE id = ?`)
	// updateRunStep is updateRun for a step of a run that stays running:
	// it leaves the indexed columns (status, updated_at, expires_at: see
	// runStep) as they are, so that it changes no index.
	updateRunStep = newWriteQuery(`UPDATE runs SET trace_count = ?, record = ?, interrupt_id = ?, calls_in_flight = ?, last_event = ?
		WHERE id = ?`)
	insertTraceEntries = newRowsInsert(`run_trace (run_id, seq, entry)`, 3)
	selectRunsByStatus = newWriteQuery(`SELECT record, last_event FROM runs WHERE status = ? ORDER BY id`)
	getRun             = newReadQuery(`SELECT record FROM runs WHERE id = ?`)
	readTraceEntries   = newReadQuery(`SELECT entry FROM run_trace WHERE run_id = ? AND seq >= ? ORDER BY seq LIMIT ?`)
	runExists          = newReadQuery(`SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?)`)
)

// CreateRun implements store.Runs: in one transaction it inserts the run,
// claims its idempotency key, inserts its first trace entries, their
// events and the run's admin events. The
// records are encoded before the transaction, off the writer.
func (s *Store) CreateRun(ctx context.Context, r store.Run, entries []workflow.TraceEntry) (err error) {
	defer wrap(&err, "create run %q", r.ID)
	if r.TraceCount != len(entries) {
		return fmt.Errorf("%d trace entries, yet trace_count is %d", len(entries), r.TraceCount)
	}
	row, err := s.newRunRow(r)
	if err != nil {
		return err
	}
	encoded, err := encodeEntries(r.ID, entries, row.values)
	if err != nil {
		return err
	}
	events := store.NewRunEvents(nil, row.run, entries, 0)
	return s.update(ctx, func(ctx context.Context, tx writeTx) error {
		if err := insertNew(ctx, tx, insertRun, row.args(events, 0)...); err != nil {
			return err
		}
		s.writer.heads.put(row.head, lastSeqOf(events, 0))
		if row.run.Idempotency != nil {
			if err := claimIdempotencyKey(ctx, tx, row.run); err != nil {
				return err
			}
		}
		return s.appendProgress(ctx, tx, nil, row, encoded, events)
	})
}

// RecordProgress implements store.Runs: in one transaction it reads the
// run's head and checks its trace count, replaces the run, and appends
// the entries after the stored ones, the events of the change and the
// run's admin events. The record and the entries are encoded before the
// transaction, off the writer; the stored record is not read.
func (s *Store) RecordProgress(ctx context.Context, r store.Run, entries []workflow.TraceEntry) (err error) {
	defer wrap(&err, "record progress of run %q", r.ID)
	row, err := s.newRunRow(r)
	if err != nil {
		return err
	}
	encoded, err := encodeEntries(r.ID, entries, row.values)
	if err != nil {
		return err
	}
	return s.update(ctx, func(ctx context.Context, tx writeTx) error {
		head, lastSeq, err := s.runHead(ctx, tx, r.ID)
		if err != nil {
			return err
		}
		if head.TraceCount != r.TraceCount-len(entries) {
			return fmt.Errorf("%d entries stored, %d appended, but trace_count is %d: %w",
				head.TraceCount, len(entries), r.TraceCount, store.ErrConflict)
		}
		prev := head.Run()
		return s.commitRun(ctx, tx, &prev, row, entries, encoded, lastSeq)
	})
}

// commitRun replaces the stored row of a run that was prev (its head) by
// row, and appends the entries (encoded) after the stored ones, the run
// events from lastSeq+1 and the admin events of the change.
func (s *Store) commitRun(ctx context.Context, tx writeTx, prev *store.Run, row runRow, entries []workflow.TraceEntry, encoded []string, lastSeq int64) error {
	events := store.NewRunEvents(prev, row.run, entries, lastSeq)
	update, args := updateRun, row.args(events, lastSeq)
	if runStep(prev, row.run) {
		update, args = updateRunStep, row.stepArgs(events, lastSeq)
	}
	if _, err := tx.exec(ctx, update, args...); err != nil {
		return err
	}
	s.writer.heads.put(row.head, lastSeqOf(events, lastSeq))
	return s.appendProgress(ctx, tx, prev, row, encoded, events)
}

// appendProgress inserts in tx what a commit taking a run from prev (nil
// for its creation) to row adds: the trace entries (encoded) after the
// stored ones, the run's events, the values the row, its entries and its
// events refer to that are not stored yet, and the admin events.
func (s *Store) appendProgress(ctx context.Context, tx writeTx, prev *store.Run, row runRow, encoded []string, events []store.RunEvent) error {
	r := row.run
	first := r.TraceCount - len(encoded)
	args := make([]any, 0, 3*len(encoded))
	for i, entry := range encoded {
		args = append(args, r.ID, first+i, entry)
	}
	if err := insertTraceEntries.exec(ctx, tx, args); err != nil {
		return err
	}
	if err := appendRunEvents(ctx, tx, events, row.values); err != nil {
		return err
	}
	if err := insertValues(ctx, tx, r.ID, row.values); err != nil {
		return err
	}
	for _, e := range store.RunAdminEvents(prev, r) {
		if _, err := s.appendEvent(ctx, tx, e); err != nil {
			return err
		}
	}
	return nil
}

// encodeEntries returns each trace entry of run id as the text stored,
// packed with values.
func encodeEntries(id string, entries []workflow.TraceEntry, values store.Values) ([]string, error) {
	encoded := make([]string, len(entries))
	for i, e := range entries {
		var err error
		if encoded[i], err = values.Pack(id, e); err != nil {
			return nil, err
		}
	}
	return encoded, nil
}

// GetRun implements store.Runs.
func (s *Store) GetRun(ctx context.Context, id string) (_ store.Run, err error) {
	defer wrap(&err, "get run %q", id)
	r, err := getOne[store.Run](ctx, s.reads, getRun, id)
	return r, s.missing(ctx, id, err)
}

// ListRuns implements store.Runs, newest update first: a running run's
// last update is its record's (runStep), any other run's its updated_at
// column (see runsPage).
func (s *Store) ListRuns(ctx context.Context, q store.RunQuery) (_ []store.Run, _ int, err error) {
	defer wrap(&err, "list runs")
	pq := pageQuery{table: "runs", page: runsPage}
	if q.Status != "" {
		pq.where = append(pq.where, "status = @status")
		pq.args = append(pq.args, sql.Named("status", q.Status))
	}
	if q.DeploymentID != "" {
		pq.where = append(pq.where, "json_extract(record, '$.deployment_id') = @deployment")
		pq.args = append(pq.args, sql.Named("deployment", q.DeploymentID))
	}
	return listPage[store.Run](ctx, s.read, s.reads, pq, q.Offset, q.Limit)
}

// ReadTrace implements store.Runs. Only when it finds no entries does it
// look whether the run exists.
func (s *Store) ReadTrace(ctx context.Context, runID string, start, limit int) (_ []workflow.TraceEntry, err error) {
	defer wrap(&err, "read trace of run %q", runID)
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	entries, err := getAll[workflow.TraceEntry](ctx, s.reads, readTraceEntries, runID, max(start, 0), limit)
	if err != nil || len(entries) > 0 {
		return entries, err
	}
	var exists bool
	if err := s.reads.row(ctx, runExists, runID).Scan(&exists); err != nil {
		return nil, err
	}
	if !exists {
		return nil, s.missing(ctx, runID, store.ErrNotFound)
	}
	return entries, nil
}

// RecoverRunning implements store.Runs in one transaction.
func (s *Store) RecoverRunning(ctx context.Context, now time.Time) (recovered []store.Run, err error) {
	defer wrap(&err, "recover running runs")
	err = s.update(ctx, func(ctx context.Context, tx writeTx) error {
		running, lastSeqs, err := runningRuns(ctx, tx)
		if err != nil {
			return err
		}
		for i, r := range running {
			row, err := s.newRunRow(store.RecoveredRun(r, now))
			if err != nil {
				return err
			}
			if err := s.commitRun(ctx, tx, &r, row, nil, nil, lastSeqs[i]); err != nil {
				return err
			}
			running[i] = row.run
		}
		recovered = running
		return nil
	})
	return recovered, err
}

// runningRuns returns, in tx, the runs still running, sorted by id, and
// the sequence number of each one's last event.
func runningRuns(ctx context.Context, tx writeTx) (runs []store.Run, lastSeqs []int64, err error) {
	rows, err := tx.rows(ctx, selectRunsByStatus, store.RunRunning)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var records [][]byte
	for rows.Next() {
		var (
			record  []byte
			lastSeq int64
		)
		if err := rows.Scan(&record, &lastSeq); err != nil {
			return nil, nil, err
		}
		records, lastSeqs = append(records, record), append(lastSeqs, lastSeq)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, nil, err
	}
	runs = make([]store.Run, len(records))
	for i, record := range records {
		if runs[i], err = store.Decoded[store.Run](record, valuesOf(ctx, tx)); err != nil {
			return nil, nil, err
		}
	}
	return runs, lastSeqs, nil
}

// runRow is a run as its row in runs keeps it.
type runRow struct {
	run         store.Run    // in UTC, as stored
	record      string       // its JSON, packed (store.Values.Pack)
	values      store.Values // the values record refers to, and those of the commit's entries and events
	expiresAt   *string      // see expiry
	interruptID *string
	calls       string // the ids of its calls in flight, a JSON array
	head        store.RunHead
}

// newRunRow returns r's row: r with its timestamps in UTC, as stores
// return them, its JSON record and its columns.
func (s *Store) newRunRow(r store.Run) (runRow, error) {
	r.CreatedAt = r.CreatedAt.UTC()
	r.UpdatedAt = r.UpdatedAt.UTC()
	values := store.Values{}
	record, err := values.Pack(r.ID, r.Kept())
	if err != nil {
		return runRow{}, err
	}
	head := store.HeadOf(r)
	calls, err := encodeCalls(head.Calls)
	if err != nil {
		return runRow{}, err
	}
	return runRow{run: r, record: record, values: values, expiresAt: s.expiry(r), interruptID: head.InterruptID, calls: calls, head: head}, nil
}

// noCalls is the calls_in_flight of a run with none: most commits'.
const noCalls = "[]"

// encodeCalls is the calls_in_flight column of the ids of calls in flight.
func encodeCalls(ids []string) (string, error) {
	if len(ids) == 0 {
		return noCalls, nil
	}
	return encode(ids)
}

// decodeCalls is the ids of calls in flight of a calls_in_flight column.
func decodeCalls(column []byte) ([]string, error) {
	if string(column) == noCalls {
		return nil, nil
	}
	var ids []string
	err := json.Unmarshal(column, &ids)
	return ids, err
}

// args are the arguments of insertRun and updateRun for a commit that
// appends events after the run's event lastSeq.
func (row runRow) args(events []store.RunEvent, lastSeq int64) []any {
	r := row.run
	return []any{r.Status, timeKey(r.UpdatedAt), r.TraceCount, row.record, row.expiresAt, row.interruptID, row.calls, lastSeqOf(events, lastSeq), r.ID}
}

// runStep reports whether a commit that takes a run from prev to next
// is a step of a run that stays running: its row's status, updated_at and
// expires_at (NULL while it runs) stay as they are, and only its record
// has its last update (see ListRuns).
func runStep(prev *store.Run, next store.Run) bool {
	return prev != nil && prev.Status == store.RunRunning && next.Status == store.RunRunning
}

// stepArgs are the arguments of updateRunStep for a commit that appends
// events after the run's event lastSeq.
func (row runRow) stepArgs(events []store.RunEvent, lastSeq int64) []any {
	r := row.run
	return []any{r.TraceCount, row.record, row.interruptID, row.calls, lastSeqOf(events, lastSeq), r.ID}
}

// lastSeqOf is the sequence number of a run's last event once events are
// appended after its event lastSeq.
func lastSeqOf(events []store.RunEvent, lastSeq int64) int64 {
	if len(events) > 0 {
		return events[len(events)-1].Seq
	}
	return lastSeq
}

// expiry is the expires_at column of run r: when retention may prune it
// (store.RunExpiry), or NULL.
func (s *Store) expiry(r store.Run) *string {
	at := store.RunExpiry(r, s.retention)
	if at == nil {
		return nil
	}
	key := timeKey(*at)
	return &key
}
