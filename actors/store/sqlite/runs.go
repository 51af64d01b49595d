package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// The queries of runs and their traces.
var (
	insertRun = newWriteQuery(`INSERT INTO runs (id, status, updated_at, trace_count, record, expires_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`)
	updateRun          = newWriteQuery(`UPDATE runs SET status = ?, updated_at = ?, trace_count = ?, record = ?, expires_at = ? WHERE id = ?`)
	insertTraceEntry   = newWriteQuery(`INSERT INTO run_trace (run_id, seq, entry) VALUES (?, ?, ?)`)
	selectRunsByStatus = newWriteQuery(`SELECT record FROM runs WHERE status = ? ORDER BY id`)
	getRun             = newReadQuery(`SELECT record FROM runs WHERE id = ?`)
	readTraceEntries   = newReadQuery(`SELECT entry FROM run_trace WHERE run_id = ? AND seq >= ? ORDER BY seq LIMIT ?`)
	runExists          = newReadQuery(`SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?)`)
)

// CreateRun implements store.Runs: in one transaction it inserts the run,
// its first trace entries, their events and the run's admin events.
func (s *Store) CreateRun(ctx context.Context, r store.Run, entries []workflow.TraceEntry) (err error) {
	defer wrap(&err, "create run %q", r.ID)
	if r.TraceCount != len(entries) {
		return fmt.Errorf("%d trace entries, yet trace_count is %d", len(entries), r.TraceCount)
	}
	r, record, err := encodeRun(r)
	if err != nil {
		return err
	}
	encoded, err := encodeEntries(entries)
	if err != nil {
		return err
	}
	return s.update(ctx, func(ctx context.Context, tx writeTx) error {
		err := insertNew(ctx, tx, insertRun, r.ID, r.Status, timeKey(r.UpdatedAt), r.TraceCount, record, s.expiry(r))
		if err != nil {
			return err
		}
		return s.appendProgress(ctx, tx, nil, r, entries, encoded, 0)
	})
}

// RecordProgress implements store.Runs: in one transaction it checks the
// stored trace count, replaces the run, and appends the entries after it,
// the events of the change and the run's admin events.
func (s *Store) RecordProgress(ctx context.Context, r store.Run, entries []workflow.TraceEntry) (err error) {
	defer wrap(&err, "record progress of run %q", r.ID)
	encoded, err := encodeEntries(entries)
	if err != nil {
		return err
	}
	return s.update(ctx, func(ctx context.Context, tx writeTx) error {
		prev, lastSeq, err := runHead(ctx, tx, r.ID)
		if err != nil {
			return err
		}
		if prev.TraceCount != r.TraceCount-len(entries) {
			return fmt.Errorf("%d entries stored, %d appended, but trace_count is %d: %w",
				prev.TraceCount, len(entries), r.TraceCount, store.ErrConflict)
		}
		r, err := s.replaceRun(ctx, tx, r)
		if err != nil {
			return err
		}
		return s.appendProgress(ctx, tx, &prev, r, entries, encoded, lastSeq)
	})
}

// appendProgress inserts in tx what a commit taking a run from prev (nil
// for its creation) to r adds: the trace entries (encoded) after the
// stored ones, the run events from lastSeq+1, and the admin events.
func (s *Store) appendProgress(ctx context.Context, tx writeTx, prev *store.Run, r store.Run, entries []workflow.TraceEntry, encoded []string, lastSeq int64) error {
	first := r.TraceCount - len(entries)
	for i, entry := range encoded {
		if _, err := tx.exec(ctx, insertTraceEntry, r.ID, first+i, entry); err != nil {
			return err
		}
	}
	if err := appendRunEvents(ctx, tx, store.NewRunEvents(prev, r, entries, lastSeq)); err != nil {
		return err
	}
	for _, e := range store.RunAdminEvents(prev, r) {
		if _, err := s.appendEvent(ctx, tx, e); err != nil {
			return err
		}
	}
	return nil
}

// encodeEntries returns each trace entry as JSON text.
func encodeEntries(entries []workflow.TraceEntry) ([]string, error) {
	encoded := make([]string, len(entries))
	for i, e := range entries {
		var err error
		if encoded[i], err = encode(e); err != nil {
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

// ListRuns implements store.Runs.
func (s *Store) ListRuns(ctx context.Context, q store.RunQuery) (_ []store.Run, _ int, err error) {
	defer wrap(&err, "list runs")
	pq := pageQuery{table: "runs", orderBy: "updated_at DESC, id DESC"}
	if q.Status != "" {
		pq.where = append(pq.where, "status = @status")
		pq.args = append(pq.args, sql.Named("status", q.Status))
	}
	return listPage[store.Run](ctx, s.read, pq, q.Offset, q.Limit)
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
		running, err := getAll[store.Run](ctx, tx, selectRunsByStatus, store.RunRunning)
		if err != nil {
			return err
		}
		for i, r := range running {
			var lastSeq int64
			if err := tx.row(ctx, lastRunEvent, r.ID).Scan(&lastSeq); err != nil {
				return err
			}
			if running[i], err = s.replaceRun(ctx, tx, store.RecoveredRun(r, now)); err != nil {
				return err
			}
			if err := s.appendProgress(ctx, tx, &r, running[i], nil, nil, lastSeq); err != nil {
				return err
			}
		}
		recovered = running
		return nil
	})
	return recovered, err
}

// replaceRun overwrites the stored row of r and returns r as stored.
func (s *Store) replaceRun(ctx context.Context, tx writeTx, r store.Run) (store.Run, error) {
	r, record, err := encodeRun(r)
	if err != nil {
		return r, err
	}
	_, err = tx.exec(ctx, updateRun, r.Status, timeKey(r.UpdatedAt), r.TraceCount, record, s.expiry(r), r.ID)
	return r, err
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

// encodeRun returns r with its timestamps in UTC, as stores return them,
// and its JSON record.
func encodeRun(r store.Run) (store.Run, string, error) {
	r.CreatedAt = r.CreatedAt.UTC()
	r.UpdatedAt = r.UpdatedAt.UTC()
	record, err := encode(r)
	return r, record, err
}
