package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// CreateRun implements store.Runs: in one transaction, one statement
// inserts the run and its first events (a new run always has an event,
// its status, so no event inserted means the id was taken), then its
// first trace entries and its admin events follow in one round trip.
func (s *Store) CreateRun(ctx context.Context, r store.Run, entries []workflow.TraceEntry) (err error) {
	defer wrap(&err, "create run %q", r.ID)
	if r.TraceCount != len(entries) {
		return fmt.Errorf("%d trace entries, yet trace_count is %d", len(entries), r.TraceCount)
	}
	row, err := newRunRow(r)
	if err != nil {
		return err
	}
	events := store.NewRunEvents(nil, row.run, entries, 0)
	seqs, records, err := eventArgs(events)
	if err != nil {
		return err
	}
	return s.update(ctx, func(tx pgx.Tx) error {
		if err := insertNew(ctx, tx, insertRun, append(row.args(int64(len(events))), seqs, records)...); err != nil {
			return err
		}
		b := &pgx.Batch{}
		if err := queueTrace(b, r.ID, 0, entries); err != nil {
			return err
		}
		if _, err := s.queueEvents(ctx, tx, b, store.RunAdminEvents(nil, row.run)...); err != nil {
			return err
		}
		return tx.SendBatch(ctx, b).Close()
	})
}

// RecordProgress implements store.Runs: in one transaction it locks the
// run's row, checks the stored trace count, and then, in one round trip,
// appends the entries after it, replaces the run and appends the events of
// the change and the run's admin events.
func (s *Store) RecordProgress(ctx context.Context, r store.Run, entries []workflow.TraceEntry) (err error) {
	defer wrap(&err, "record progress of run %q", r.ID)
	row, err := newRunRow(r)
	if err != nil {
		return err
	}
	return s.update(ctx, func(tx pgx.Tx) error {
		prev, lastEvent, err := lockHead(ctx, tx, r.ID)
		if err != nil {
			return err
		}
		if prev.TraceCount != r.TraceCount-len(entries) {
			return fmt.Errorf("%d entries stored, %d appended, but trace_count is %d: %w",
				prev.TraceCount, len(entries), r.TraceCount, store.ErrConflict)
		}
		b := &pgx.Batch{}
		events := store.NewRunEvents(&prev, row.run, entries, lastEvent)
		if err := queueCommit(b, row, prev.TraceCount, entries, events, lastEvent); err != nil {
			return err
		}
		if _, err := s.queueEvents(ctx, tx, b, store.RunAdminEvents(&prev, row.run)...); err != nil {
			return err
		}
		return tx.SendBatch(ctx, b).Close()
	})
}

// GetRun implements store.Runs.
func (s *Store) GetRun(ctx context.Context, id string) (_ store.Run, err error) {
	defer wrap(&err, "get run %q", id)
	return getOne[store.Run](ctx, s.pool, `SELECT record FROM runs WHERE id = $1`, id)
}

// ListRuns implements store.Runs.
func (s *Store) ListRuns(ctx context.Context, q store.RunQuery) (_ []store.Run, _ int, err error) {
	defer wrap(&err, "list runs")
	pq := pageQuery{table: "runs", orderBy: "updated_at DESC, updated_at_ns DESC, id DESC"}
	if q.Status != "" {
		pq.filter("status = %s", q.Status)
	}
	return listPage[store.Run](ctx, s.pool, pq, q.Offset, q.Limit)
}

// ReadTrace implements store.Runs. Only when it finds no entries does it
// look whether the run exists.
func (s *Store) ReadTrace(ctx context.Context, runID string, start, limit int) (_ []workflow.TraceEntry, err error) {
	defer wrap(&err, "read trace of run %q", runID)
	entries, err := getAll[workflow.TraceEntry](ctx, s.pool,
		`SELECT entry FROM run_trace WHERE run_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3`,
		runID, max(start, 0), limitArg(limit))
	if err != nil || len(entries) > 0 {
		return entries, err
	}
	var exists bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM runs WHERE id = $1)`, runID).Scan(&exists); err != nil {
		return nil, err
	}
	if !exists {
		return nil, store.ErrNotFound
	}
	return entries, nil
}

// RecoverRunning implements store.Runs in one transaction, which locks the
// running runs' rows.
func (s *Store) RecoverRunning(ctx context.Context, now time.Time) (recovered []store.Run, err error) {
	defer wrap(&err, "recover running runs")
	err = s.update(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx,
			`SELECT record, last_event FROM runs WHERE status = $1 ORDER BY id FOR UPDATE`, store.RunRunning)
		if err != nil {
			return err
		}
		type running struct {
			run       store.Run
			lastEvent int64
		}
		list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (running, error) {
			var record []byte
			var r running
			if err := row.Scan(&record, &r.lastEvent); err != nil {
				return r, err
			}
			return r, json.Unmarshal(record, &r.run)
		})
		if err != nil {
			return err
		}
		b := &pgx.Batch{}
		recovered = make([]store.Run, 0, len(list))
		for _, r := range list {
			row, err := newRunRow(store.RecoveredRun(r.run, now))
			if err != nil {
				return err
			}
			events := store.NewRunEvents(&r.run, row.run, nil, r.lastEvent)
			if err := queueCommit(b, row, r.run.TraceCount, nil, events, r.lastEvent); err != nil {
				return err
			}
			if _, err := s.queueEvents(ctx, tx, b, store.RunAdminEvents(&r.run, row.run)...); err != nil {
				return err
			}
			recovered = append(recovered, row.run)
		}
		if b.Len() == 0 {
			return nil
		}
		return tx.SendBatch(ctx, b).Close()
	})
	return recovered, err
}
