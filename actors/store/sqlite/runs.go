package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// The queries of runs and their traces. A run's row keeps, next to its
// record, its head (store.RunHead: status, trace_count, interrupt_id,
// calls_in_flight) and the sequence number of its last event, which a
// commit reads instead of the record, when the writer has not cached it
// (runHeads) and the run's journal has no row (journal.go).
var (
	insertRun = newWriteQuery(`INSERT INTO runs (status, updated_at, trace_count, record, expires_at, interrupt_id, calls_in_flight, last_event, id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`)
	updateRun = newWriteQuery(`UPDATE runs SET status = ?, updated_at = ?, trace_count = ?, record = ?, expires_at = ?,
		interrupt_id = ?, calls_in_flight = ?, last_event = ? WHERE id = ?`)
	insertTraceEntries = newRowsInsert(`run_trace (run_id, seq, entry)`, 3)
	// selectRunsByStatus folds each run with its journal: its record, its
	// last event and its journal's last row.
	selectRunsByStatus = newWriteQuery(`SELECT ` + journalRun + `,
		max(last_event, COALESCE((SELECT MAX(j.last_event) FROM run_journal AS j WHERE ` + journalOf + `), 0)),
		COALESCE((SELECT MAX(j.key) & 4294967295 FROM run_journal AS j WHERE ` + journalOf + `), 0)
		FROM runs WHERE status = ? ORDER BY id`)
	getRun           = newReadQuery(`SELECT ` + journalRun + ` FROM runs WHERE id = ?`)
	readTraceEntries = newReadQuery(`SELECT entry FROM run_trace WHERE run_id = ? AND seq >= ? ORDER BY seq LIMIT ?`)
	runExists        = newReadQuery(`SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?)`)
)

// CreateRun implements store.Runs: in one transaction it inserts the run,
// claims its idempotency key, inserts its first trace entries, their
// events and the run's admin events. The
// records are encoded before the transaction, off the writer.
func (s *Store) CreateRun(ctx context.Context, r store.Run, entries []workflow.TraceEntry) error {
	return s.commitNow(ctx, store.Commit{Create: true, Run: r, Entries: entries})
}

// creation encodes what CreateRun writes and returns its write.
func (s *Store) creation(r store.Run, entries []workflow.TraceEntry) (writeFn, error) {
	if r.TraceCount != len(entries) {
		return nil, fmt.Errorf("%d trace entries, yet trace_count is %d", len(entries), r.TraceCount)
	}
	row, err := s.newRunRow(r)
	if err != nil {
		return nil, err
	}
	encoded, err := encodeEntries(r.ID, entries, row.values)
	if err != nil {
		return nil, err
	}
	events := store.NewRunEvents(nil, row.run, entries, 0)
	return func(ctx context.Context, tx writeTx) error {
		if err := insertNew(ctx, tx, insertRun, row.args(events, 0)...); err != nil {
			return err
		}
		s.writer.heads.put(row.head, lastSeqOf(events, 0), 0)
		if row.run.Idempotency != nil {
			if err := claimIdempotencyKey(ctx, tx, row.run); err != nil {
				return err
			}
		}
		return s.appendProgress(ctx, tx, nil, row, folded{}, encoded, events)
	}, nil
}

// RecordProgress implements store.Runs: in one transaction it reads the
// run's head and checks its trace count, replaces the run, and appends
// the entries after the stored ones, the events of the change and the
// run's admin events. The record and the entries are encoded before the
// transaction, off the writer; the stored record is not read.
func (s *Store) RecordProgress(ctx context.Context, r store.Run, entries []workflow.TraceEntry) error {
	return s.commitNow(ctx, store.Commit{Run: r, Entries: entries})
}

// commitNow writes c's run (not its live events: c.Live is for
// SubmitCommit) through the writer and waits for it.
func (s *Store) commitNow(ctx context.Context, c store.Commit) error {
	fn, err := s.commitWrite(c)
	if err == nil {
		err = s.update(ctx, fn)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", commitName(c), err)
	}
	return nil
}

// progress encodes what RecordProgress writes and returns its write.
func (s *Store) progress(r store.Run, entries []workflow.TraceEntry) (writeFn, error) {
	row, err := s.newRunRow(r)
	if err != nil {
		return nil, err
	}
	encoded, err := encodeEntries(r.ID, entries, row.values)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, tx writeTx) error {
		c, err := s.runHead(ctx, tx, r.ID)
		if err != nil {
			return err
		}
		if c.head.TraceCount != r.TraceCount-len(entries) {
			return fmt.Errorf("%d entries stored, %d appended, but trace_count is %d: %w",
				c.head.TraceCount, len(entries), r.TraceCount, store.ErrConflict)
		}
		prev := c.head.Run()
		return s.commitRun(ctx, tx, &prev, row, entries, encoded, c.lastSeq, c.journal)
	}, nil
}

// commitRun commits a run that was prev (its head), whose journal's last
// row is journal (0: none), as row, with the entries (encoded) after the
// stored ones, the run events from lastSeq+1 and the admin events of the
// change: a step of a run that stays running as a row of its journal
// (while it holds fewer than maxJournalRows), any other commit as its
// row, after folding its journal.
func (s *Store) commitRun(ctx context.Context, tx writeTx, prev *store.Run, row runRow, entries []workflow.TraceEntry, encoded []string, lastSeq, journal int64) error {
	events := store.NewRunEvents(prev, row.run, entries, lastSeq)
	if runStep(prev, row.run) && journal < maxJournalRows { // a step: no admin event (store.RunAdminEvents)
		if err := appendJournal(ctx, tx, row, journal, encoded, events, lastSeq); err != nil {
			return err
		}
		s.writer.heads.put(row.head, lastSeqOf(events, lastSeq), journal+1)
		return nil
	}
	var fold folded
	if journal > 0 {
		var err error
		if fold, err = foldJournal(ctx, tx, row.run.ID); err != nil {
			return err
		}
	}
	if _, err := tx.exec(ctx, updateRun, row.args(events, lastSeq)...); err != nil {
		return err
	}
	s.writer.heads.put(row.head, lastSeqOf(events, lastSeq), 0)
	return s.appendProgress(ctx, tx, prev, row, fold, encoded, events)
}

// appendProgress inserts in tx what a commit taking a run from prev (nil
// for its creation) to row adds: the trace entries and run events of its
// folded journal (fold), then the trace entries (encoded) after those,
// the run's events, the values the row, its entries and its events refer
// to that are not stored yet, and the admin events.
func (s *Store) appendProgress(ctx context.Context, tx writeTx, prev *store.Run, row runRow, fold folded, encoded []string, events []store.RunEvent) error {
	r := row.run
	first := r.TraceCount - len(encoded)
	args := slices.Grow(fold.trace, 3*len(encoded))
	for i, entry := range encoded {
		args = append(args, r.ID, first+i, entry)
	}
	if err := insertTraceEntries.exec(ctx, tx, args); err != nil {
		return err
	}
	if err := appendRunEvents(ctx, tx, fold.events, events, row.values); err != nil {
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
	var entries []workflow.TraceEntry
	err = inTx(ctx, s.read, readOnly, func(tx *sql.Tx) error {
		reads := s.reads.in(tx)
		var err error
		if entries, err = readTrace(ctx, reads, runID, start, limit); err != nil || len(entries) > 0 {
			return err
		}
		var exists bool
		if err := reads.row(ctx, runExists, runID).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return store.ErrNotFound
		}
		return nil
	})
	if err != nil {
		return nil, s.missing(ctx, runID, err)
	}
	return entries, nil
}

// readTrace reads with reads, in a read transaction, the trace entries
// of a run from index start, up to limit (< 0: no limit): those of
// run_trace, then those of its journal.
func readTrace(ctx context.Context, reads reader, runID string, start, limit int) ([]workflow.TraceEntry, error) {
	start = max(start, 0)
	texts, err := scanAll(reads.rows(ctx, readTraceEntries, runID, start, limit))
	if err != nil {
		return nil, err
	}
	if limit < 0 || len(texts) < limit {
		journal, err := scanJournal(reads.rows(ctx, readJournal, runID))
		if err != nil {
			return nil, err
		}
		rest := -1
		if limit >= 0 {
			rest = limit - len(texts)
		}
		texts = append(texts, journalEntries(journal, start+len(texts), rest)...)
	}
	return decodeRecords[workflow.TraceEntry](texts, valuesOf(ctx, reads))
}

// RecoverRunning implements store.Runs in one transaction.
func (s *Store) RecoverRunning(ctx context.Context, now time.Time) (recovered []store.Run, err error) {
	defer wrap(&err, "recover running runs")
	err = s.update(ctx, func(ctx context.Context, tx writeTx) error {
		running, lastSeqs, journals, err := runningRuns(ctx, tx)
		if err != nil {
			return err
		}
		for i, r := range running {
			row, err := s.newRunRow(store.RecoveredRun(r, now))
			if err != nil {
				return err
			}
			if err := s.commitRun(ctx, tx, &r, row, nil, nil, lastSeqs[i], journals[i]); err != nil {
				return err
			}
			running[i] = row.run
		}
		recovered = running
		return nil
	})
	return recovered, err
}

// runningRuns returns, in tx, the runs still running, sorted by id, as
// their journals leave them, the sequence number of each one's last event
// and of its journal's last row.
func runningRuns(ctx context.Context, tx writeTx) (runs []store.Run, lastSeqs, journals []int64, err error) {
	rows, err := tx.rows(ctx, selectRunsByStatus, store.RunRunning)
	if err != nil {
		return nil, nil, nil, err
	}
	defer rows.Close()
	var records [][]byte
	for rows.Next() {
		var (
			record           []byte
			lastSeq, journal int64
		)
		if err := rows.Scan(&record, &lastSeq, &journal); err != nil {
			return nil, nil, nil, err
		}
		records, lastSeqs, journals = append(records, record), append(lastSeqs, lastSeq), append(journals, journal)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, nil, nil, err
	}
	runs = make([]store.Run, len(records))
	for i, record := range records {
		if runs[i], err = store.Decoded[store.Run](record, valuesOf(ctx, tx)); err != nil {
			return nil, nil, nil, err
		}
	}
	return runs, lastSeqs, journals, nil
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
// is a step of a run that stays running: a row of its journal, which
// leaves its row as it was (see ListRuns).
func runStep(prev *store.Run, next store.Run) bool {
	return prev != nil && prev.Status == store.RunRunning && next.Status == store.RunRunning
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

// SubmitCommit implements store.Submitter: c is queued to the writer as
// one write (its live events first, in a savepoint of their own), and done
// is called by the writer once it has committed (or failed). Their records are encoded
// here, on the caller's goroutine, as CreateRun and RecordProgress
// encode them on theirs.
func (s *Store) SubmitCommit(ctx context.Context, c store.Commit, done func(store.CommitOutcome)) {
	var o store.CommitOutcome
	if s.writer == nil {
		o.Err, o.LiveErr = errReadOnly, errReadOnly
		done(o)
		return
	}
	fn, err := s.commitWrite(c)
	if err != nil {
		o.Err = fmt.Errorf("%s: %w", commitName(c), err)
		done(o)
		return
	}
	if len(c.Live) > 0 {
		fn = s.withLive(c.Run.ID, c.Live, fn, &o.LiveErr)
	}
	s.submit(ctx, fn, func(err error) {
		if err != nil {
			o.Err = fmt.Errorf("%s: %w", commitName(c), err)
			o.LiveErr = cmp.Or(o.LiveErr, o.Err) // rolled back with it
		}
		done(o)
	})
}

// withLive is fn after the live events of run runID are appended in a
// savepoint of its own: their failure is told to liveErr, and fn goes on.
func (s *Store) withLive(runID string, live []store.RunEvent, fn writeFn, liveErr *error) writeFn {
	return func(ctx context.Context, tx writeTx) error {
		own, fatal := s.writer.inSavepoint(ctx, s.liveEvents(runID, live))
		if fatal != nil {
			return fatal
		}
		if own != nil {
			*liveErr = fmt.Errorf("append events to run %q: %w", runID, own)
		}
		return fn(ctx, tx)
	}
}

// commitWrite encodes what c's run write writes and returns the write:
// CreateRun's or RecordProgress's.
func (s *Store) commitWrite(c store.Commit) (writeFn, error) {
	if c.Create {
		return s.creation(c.Run, c.Entries)
	}
	return s.progress(c.Run, c.Entries)
}

// commitName is what c's run write is called in its error.
func commitName(c store.Commit) string {
	if c.Create {
		return fmt.Sprintf("create run %q", c.Run.ID)
	}
	return fmt.Sprintf("record progress of run %q", c.Run.ID)
}

// submit queues fn to the writer without waiting (writer.submit); then
// gets its outcome as update would return it. The writer reports it:
// a write that succeeds on a disk with room is told then at once, on the
// writer's goroutine; any other is told from a goroutine of its own,
// since telling s.space of a change of the disk's state may append an
// admin event (a write, which the writer can not wait for).
func (s *Store) submit(ctx context.Context, fn writeFn, then func(error)) {
	s.writer.submit(ctx, fn, func(err error) {
		if err == nil && !s.full.Load() {
			then(nil)
			return
		}
		go func() { then(s.observe(err)) }()
	})
}
