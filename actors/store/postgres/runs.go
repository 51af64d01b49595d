package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// CreateRun implements store.Runs: in one transaction, a first statement
// claims the run's idempotency key, if it has one (store.ErrKeyTaken when
// another run holds it), and one statement inserts the run, as the store's node's, and its first events (a new run
// always has an event, its status, so no event inserted means the id was
// taken), then its first trace entries and its admin events follow in one
// round trip. The admin events are numbered once it has committed (see
// commit). A store fenced on its node's membership (WithMembership)
// inserts in that statement only while the node holds its lease, which
// the statement keeps until the transaction ends (store.ErrNotMember
// otherwise).
func (s *Store) CreateRun(ctx context.Context, r store.Run, entries []workflow.TraceEntry) (err error) {
	defer wrap(&err, "create run %q", r.ID)
	if r.TraceCount != len(entries) {
		return fmt.Errorf("%d trace entries, yet trace_count is %d", len(entries), r.TraceCount)
	}
	row, err := newRunRow(r, s.retention)
	if err != nil {
		return err
	}
	events := store.NewRunEvents(nil, row.run, entries, 0)
	seqs, records, err := eventArgs(events, row.values)
	if err != nil {
		return err
	}
	err = s.commit(ctx, func(tx pgx.Tx, b *pgx.Batch) ([]store.Event, error) {
		if row.run.Idempotency != nil {
			if err := claimIdempotencyKey(ctx, tx, row.run); err != nil {
				return nil, err
			}
		}
		if err := s.member.insert(ctx, tx, s.node, append(row.args(int64(len(events)), s.node), seqs, records)); err != nil {
			return nil, err
		}
		if err := queueTrace(b, r.ID, 0, entries, row.values); err != nil {
			return nil, err
		}
		if err := queueValues(ctx, tx, b, r.ID, row.values); err != nil {
			return nil, err
		}
		return store.RunAdminEvents(nil, row.run), nil
	})
	if err == nil {
		s.announceRun(r.ID, events)
	}
	return err
}

// announceRun announces the events a commit of run id appended.
func (s *Store) announceRun(id string, events []store.RunEvent) {
	if len(events) > 0 {
		s.announce.runEvents(id, events[len(events)-1].Seq)
	}
}

// RecordProgress implements store.Runs: in one transaction it locks the
// run's row and checks it, and then, in one round trip, appends the
// entries after the stored ones, replaces the run, as the store's node's,
// and appends the events of the change and the run's admin events (which
// are numbered once it has committed, see commit).
//
// The checks, under the row's lock: a run that another node last
// committed is store.ErrFenced unless it is interrupted (that node claimed
// it, see ClaimRuns, and it is running there or it finished it: a node
// that wakes up after its run was claimed must not overwrite what the
// survivor recorded), and a stored trace count other than
// r.TraceCount-len(entries) is store.ErrConflict. An interrupted run may
// be resumed or cancelled by any node, which it then belongs to; a store
// fenced on its node's membership (WithMembership) makes a run running
// that was not (a resume) only while the node holds its lease, read in
// the transaction (store.ErrNotMember otherwise). A run the node is
// running already it commits without looking at the lease: the row's
// node is its fence (docs/decisions.md, "Cluster: a node whose membership
// lapsed creates no run").
func (s *Store) RecordProgress(ctx context.Context, r store.Run, entries []workflow.TraceEntry) (err error) {
	defer wrap(&err, "record progress of run %q", r.ID)
	row, err := newRunRow(r, s.retention)
	if err != nil {
		return err
	}
	var events []store.RunEvent
	err = s.commit(ctx, func(tx pgx.Tx, b *pgx.Batch) ([]store.Event, error) {
		prev, err := lockRun(ctx, tx, r.ID)
		if err != nil {
			return nil, err
		}
		if prev.node != s.node && prev.head.Status != store.RunInterrupted {
			return nil, fmt.Errorf("node %q has it (%s), not node %q: %w", prev.node, prev.head.Status, s.node, store.ErrFenced)
		}
		if r.Status == store.RunRunning && prev.head.Status != store.RunRunning {
			if err := s.member.check(ctx, tx, s.node); err != nil {
				return nil, err
			}
		}
		if prev.head.TraceCount != r.TraceCount-len(entries) {
			return nil, fmt.Errorf("%d entries stored, %d appended, but trace_count is %d: %w",
				prev.head.TraceCount, len(entries), r.TraceCount, store.ErrConflict)
		}
		events = store.NewRunEvents(&prev.head, row.run, entries, prev.lastEvent)
		if err := queueCommit(ctx, tx, b, row, s.node, prev, entries, events); err != nil {
			return nil, err
		}
		return store.RunAdminEvents(&prev.head, row.run), nil
	})
	if err == nil {
		s.announceRun(r.ID, events)
	}
	return err
}

// GetRun implements store.Runs: the run as its journal leaves it.
func (s *Store) GetRun(ctx context.Context, id string) (_ store.Run, err error) {
	defer wrap(&err, "get run %q", id)
	r, err := getOne[store.Run](ctx, s.pool, `SELECT `+journalRecord+` FROM runs WHERE id = $1`, id)
	return r, s.missing(ctx, id, err)
}

// ListRuns implements store.Runs, newest update first: a running run's
// last update is its record's (runStep), any other run's its updated_at
// columns (see runsPage).
func (s *Store) ListRuns(ctx context.Context, q store.RunQuery) (_ []store.Run, _ int, err error) {
	defer wrap(&err, "list runs")
	pq := pageQuery{table: "runs", page: runsPage}
	if q.Status != "" {
		pq.filter("status = %s", q.Status)
	}
	if q.DeploymentID != "" {
		pq.filter("(record::jsonb)->>'deployment_id' = %s", q.DeploymentID)
	}
	return listPage[store.Run](ctx, s.pool, pq, q.Offset, q.Limit)
}

// ReadTrace implements store.Runs. Only when it finds no entries does it
// look whether the run exists.
func (s *Store) ReadTrace(ctx context.Context, runID string, start, limit int) (_ []workflow.TraceEntry, err error) {
	defer wrap(&err, "read trace of run %q", runID)
	entries, err := readTrace(ctx, s.pool, runID, start, limit)
	if err != nil || len(entries) > 0 {
		return entries, err
	}
	var exists bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM runs WHERE id = $1)`, runID).Scan(&exists); err != nil {
		return nil, err
	}
	if !exists {
		return nil, s.missing(ctx, runID, store.ErrNotFound)
	}
	return entries, nil
}

// readTrace reads entries [start, start+limit) of a run's trace, its
// journal's last, through q, in one statement; limit <= 0 reads to the
// end.
func readTrace(ctx context.Context, q querier, runID string, start, limit int) ([]workflow.TraceEntry, error) {
	return getAll[workflow.TraceEntry](ctx, q, selectTrace, runID, max(start, 0), limitArg(limit))
}

// RecoverRunning implements store.Runs for the store's node: it recovers
// the runs running on that node only, in one transaction, which locks
// their rows, so that a node starting leaves alone the runs that the
// other nodes of its cluster are executing. Their records are read as
// their journals leave them, once the rows are locked, and each
// recovery folds its run's journal. Their admin events are numbered once
// it has committed (see commit).
//
// It and ClaimRuns spell status = 'running' out, so that the planner can
// use the index of the running runs by node (runs_running_by_node, which
// is partial on that condition); ClaimRuns reads the records of the
// node's interrupted runs besides, for their interrupt's kind.
func (s *Store) RecoverRunning(ctx context.Context, now time.Time) (recovered []store.Run, err error) {
	defer wrap(&err, "recover the running runs of node %q", s.node)
	var appended [][]store.RunEvent // the events of each recovered run
	err = s.commit(ctx, func(tx pgx.Tx, b *pgx.Batch) ([]store.Event, error) {
		rows, err := tx.Query(ctx, `SELECT id FROM runs WHERE status = 'running' AND node = $1 ORDER BY id FOR UPDATE`, s.node)
		if err != nil {
			return nil, err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(ids) == 0 {
			recovered = []store.Run{}
			return nil, err
		}
		list, err := foldedRuns(ctx, tx, ids)
		if err != nil {
			return nil, err
		}
		var admin []store.Event
		recovered = make([]store.Run, 0, len(list))
		for _, prev := range list {
			row, err := newRunRow(store.RecoveredRun(prev.head, now), s.retention)
			if err != nil {
				return nil, err
			}
			events := store.NewRunEvents(&prev.head, row.run, nil, prev.lastEvent)
			if err := queueCommit(ctx, tx, b, row, s.node, prev, nil, events); err != nil {
				return nil, err
			}
			admin = append(admin, store.RunAdminEvents(&prev.head, row.run)...)
			recovered = append(recovered, row.run)
			appended = append(appended, events)
		}
		return admin, nil
	})
	if err == nil {
		for i, r := range recovered {
			s.announceRun(r.ID, appended[i])
		}
	}
	return recovered, err
}

// foldedRuns reads, in tx, the runs ids (sorted) as their journals leave
// them: each one's whole record (as lockedRun.head), the sequence number
// of its last event and of its journal's last row.
func foldedRuns(ctx context.Context, tx pgx.Tx, ids []string) ([]lockedRun, error) {
	rows, err := tx.Query(ctx, `SELECT `+journalRecord+`, `+journalLastEvent+`, `+journalSeq+`
		FROM runs WHERE id = ANY($1) ORDER BY id`, ids)
	if err != nil {
		return nil, err
	}
	var records [][]byte
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (lockedRun, error) {
		var (
			record []byte
			l      lockedRun
		)
		err := row.Scan(&record, &l.lastEvent, &l.journal)
		records = append(records, record)
		return l, err
	})
	if err != nil {
		return nil, err
	}
	for i, record := range records {
		if list[i].head, err = store.Decoded[store.Run](record, valuesOf(ctx, tx)); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// ClaimRuns implements store.RunClaimer: one UPDATE moves the running runs
// of node from, and those interrupted by their server's request, to the
// store's node, and a second statement of its transaction reads them as
// their journals leave them (after the UPDATE, it reads the steps that
// from committed while the UPDATE waited for their rows). Two nodes
// claiming at once queue on the rows' locks, and the second finds the
// rows the first moved no longer from's (READ COMMITTED re-checks an
// updated row's WHERE), so each gets its own.
func (s *Store) ClaimRuns(ctx context.Context, from string) (claimed []store.Run, err error) {
	defer wrap(&err, "claim the running runs of node %q", from)
	err = s.update(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `UPDATE runs SET node = $2 WHERE node = $1 AND (status = 'running'
			OR (status = 'interrupted' AND (record::jsonb)->'interrupt'->>'kind' = ANY($3)))
		RETURNING id`, from, s.node, store.UpstreamInterruptKinds)
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(ids) == 0 {
			claimed = []store.Run{}
			return err
		}
		claimed, err = getAll[store.Run](ctx, tx, `SELECT `+journalRecord+` FROM runs WHERE id = ANY($1) ORDER BY id`, ids)
		return err
	})
	return claimed, err
}
