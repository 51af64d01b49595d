package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// runRow is a run as its row in runs keeps it.
type runRow struct {
	run         store.Run    // in UTC, as stored
	record      string       // its JSON, packed (store.Values.Pack)
	values      store.Values // the values record refers to, and those of the commit's entries and events
	updatedAt   time.Time    // run.UpdatedAt to the microsecond
	updatedNs   int          // and the nanoseconds below it
	interruptID *string
	calls       []string   // the ids of the calls in flight, sorted
	expiresAt   *time.Time // when retention may prune it (store.RunExpiry)
}

// newRunRow returns r's row: its timestamps in UTC, as stores return them,
// its JSON record and its columns; retention is the store's (see
// store.RunExpiry).
func newRunRow(r store.Run, retention time.Duration) (runRow, error) {
	r.CreatedAt = r.CreatedAt.UTC()
	r.UpdatedAt = r.UpdatedAt.UTC()
	values := store.Values{}
	record, err := values.Pack(r.ID, r.Kept())
	if err != nil {
		return runRow{}, err
	}
	head := store.HeadOf(r)
	return runRow{
		run: r, record: record, values: values,
		updatedAt: r.UpdatedAt.Truncate(time.Microsecond), updatedNs: r.UpdatedAt.Nanosecond() % 1000,
		interruptID: head.InterruptID, calls: head.Calls, expiresAt: store.RunExpiry(r, retention),
	}, nil
}

// runColumns are the columns of a run's row that insertRun and
// updateRun write, $1 to $11 (runRow.args).
const runColumns = `id, status, updated_at, updated_at_ns, trace_count, interrupt_id, calls_in_flight, last_event, record, node, expires_at`

// insertFirstEvents, after a WITH query run of the id of the run a
// statement inserted, inserts its events ($12 their sequence numbers, $13
// their records): none when run is empty.
const insertFirstEvents = `INSERT INTO run_events (run_id, seq, record)
SELECT run.id, e.seq, e.record FROM run, unnest($12::bigint[], $13::text[]) AS e (seq, record)`

// insertRun is the INSERT of a run's row, with the run's events in the
// same statement: it inserts both, or, when the id is taken, neither.
const insertRun = `WITH run AS (
	INSERT INTO runs (` + runColumns + `)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING RETURNING id
)
` + insertFirstEvents

// updateRun is the UPDATE of a run's row.
const updateRun = `UPDATE runs SET status = $2, updated_at = $3, updated_at_ns = $4, trace_count = $5,
	interrupt_id = $6, calls_in_flight = $7, last_event = $8, record = $9, node = $10, expires_at = $11 WHERE id = $1`

// updateRunStep is updateRun for a step of a run that stays running on
// the node that commits it (runStep) which is not journaled, since it
// folds a full journal (maxJournalRows): it leaves the indexed columns
// (status, updated_at and updated_at_ns, node, expires_at) as they are,
// so that PostgreSQL may update the row in place (a heap-only tuple)
// without a new entry in any index of runs (runRow.stepArgs).
const updateRunStep = `UPDATE runs SET trace_count = $2, interrupt_id = $3, calls_in_flight = $4, last_event = $5, record = $6 WHERE id = $1`

// runStep reports whether a commit that takes a run from prev to next
// is a step of a run that stays running: a row of its journal, or else an
// update of its row that leaves its indexed columns as they are; either
// way only its record has its last update (see ListRuns).
// The node is the row's already: a run running elsewhere is fenced off.
func runStep(prev *store.Run, next store.Run) bool {
	return prev != nil && prev.Status == store.RunRunning && next.Status == store.RunRunning
}

// args are the arguments of insertRun and updateRun up to $11, with
// lastEvent the sequence number of the run's last event and node the node
// that executes it.
func (row runRow) args(lastEvent int64, node string) []any {
	r := row.run
	return []any{r.ID, r.Status, row.updatedAt, row.updatedNs, r.TraceCount, row.interruptID, row.calls, lastEvent, row.record, node, row.expiresAt}
}

// stepArgs are the arguments of updateRunStep.
func (row runRow) stepArgs(lastEvent int64) []any {
	r := row.run
	return []any{r.ID, r.TraceCount, row.interruptID, row.calls, lastEvent, row.record}
}

// lockedRun is what a commit reads of a run's row, which it locks, and
// of its journal.
type lockedRun struct {
	head      store.Run // its head (store.RunHead.Run), as its journal leaves it
	lastEvent int64     // the sequence number of the run's last event
	node      string    // the node that executes it, or last did
	journal   int       // the seq of its journal's last row, 0 for none
}

// lockRun reads a run's row in tx and locks it until tx ends, then reads
// the last row of its journal; store.ErrNotFound if there is no run. The
// two statements go in one round trip, the second after the first has
// the lock: it reads what the commit that held the lock before it
// appended (each statement of a READ COMMITTED transaction reads what
// committed before it began).
func lockRun(ctx context.Context, tx pgx.Tx, id string) (lockedRun, error) {
	var l lockedRun
	b := &pgx.Batch{}
	b.Queue(`SELECT status, trace_count, interrupt_id, calls_in_flight, last_event, node FROM runs WHERE id = $1 FOR UPDATE`, id).
		QueryRow(func(row pgx.Row) error {
			head := store.RunHead{ID: id}
			err := row.Scan(&head.Status, &head.TraceCount, &head.InterruptID, &head.Calls, &l.lastEvent, &l.node)
			if errors.Is(err, pgx.ErrNoRows) {
				return store.ErrNotFound
			}
			l.head = head.Run()
			return err
		})
	readJournalHead(b, id, &l)
	return l, tx.SendBatch(ctx, b).Close()
}

// eventArgs are the sequence numbers and the records of events, as
// store.EncodeRunEvent keeps them with values, as the arrays that
// insertRun and insertRunEvents take.
func eventArgs(events []store.RunEvent, values store.Values) ([]int64, []string, error) {
	seqs := make([]int64, len(events))
	records := make([]string, len(events))
	for i, e := range events {
		record, err := store.EncodeRunEvent(e, values)
		if err != nil {
			return nil, nil, err
		}
		seqs[i], records[i] = e.Seq, record
	}
	return seqs, records, nil
}

// insertRunEvents appends events to a run's log: $1 the run, $2 their
// sequence numbers, $3 their records.
const insertRunEvents = `INSERT INTO run_events (run_id, seq, record) SELECT $1, * FROM unnest($2::bigint[], $3::text[])`

// insertTrace appends entries to a run's trace: $1 the run, $2 their
// positions, $3 their JSON.
const insertTrace = `INSERT INTO run_trace (run_id, seq, entry) SELECT $1, * FROM unnest($2::integer[], $3::text[])`

// traceArgs are the positions and the JSON of entries of run id appended
// after the first `first`, packed with values, as the arrays that
// insertTrace takes.
func traceArgs(id string, first int, entries []workflow.TraceEntry, values store.Values) ([]int, []string, error) {
	seqs := make([]int, len(entries))
	records := make([]string, len(entries))
	for i, e := range entries {
		record, err := values.Pack(id, e)
		if err != nil {
			return nil, nil, err
		}
		seqs[i], records[i] = first+i, record
	}
	return seqs, records, nil
}

// queueTrace queues in b the append of entries to run id's trace after
// the first `first`, packed with values.
func queueTrace(b *pgx.Batch, id string, first int, entries []workflow.TraceEntry, values store.Values) error {
	if len(entries) == 0 {
		return nil
	}
	seqs, records, err := traceArgs(id, first, entries, values)
	if err != nil {
		return err
	}
	b.Queue(insertTrace, id, seqs, records)
	return nil
}

// queueCommit queues in b what one commit of a run by node, which was
// prev, writes: a step of a run that stays running (runStep) as a row of
// its journal while it holds fewer than maxJournalRows; any other commit
// folds the journal, appends its entries to its trace, replaces its row
// by row (a step in place: updateRunStep) and appends its events. Either
// way, the values they refer to that q (the commit's transaction) does
// not hold yet go with it.
func queueCommit(ctx context.Context, q querier, b *pgx.Batch, row runRow, node string, prev lockedRun, entries []workflow.TraceEntry, events []store.RunEvent) error {
	first, lastEvent := prev.head.TraceCount, prev.lastEvent
	if len(events) > 0 {
		lastEvent = events[len(events)-1].Seq
	}
	step := runStep(&prev.head, row.run)
	if step && prev.journal < maxJournalRows {
		return queueJournal(ctx, q, b, row, prev.journal, first, entries, events, lastEvent)
	}
	if prev.journal > 0 {
		b.Queue(foldJournal, row.run.ID)
	}
	if err := queueTrace(b, row.run.ID, first, entries, row.values); err != nil {
		return err
	}
	if step {
		b.Queue(updateRunStep, row.stepArgs(lastEvent)...)
	} else {
		b.Queue(updateRun, row.args(lastEvent, node)...)
	}
	if len(events) > 0 {
		seqs, records, err := eventArgs(events, row.values)
		if err != nil {
			return err
		}
		b.Queue(insertRunEvents, row.run.ID, seqs, records)
	}
	return queueValues(ctx, q, b, row.run.ID, row.values)
}
