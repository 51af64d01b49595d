package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// The run journal (migration 11). A step of a run that stays running on
// its node (runStep) is one row of run_journal: the run's head and record
// after the step (its checkpoint), the step's trace entries and its run
// events. Its runs row, run_trace and run_events are not written: one
// heap row and one index entry, where the step updated the run's row and
// inserted into two tables, each with its index. The row is still locked
// (lockRun, SELECT ... FOR UPDATE) by each commit: it is the cluster's
// fence, which the journal leaves where it was. The next commit that
// changes the run's status (its end, an interrupt, a recovery) folds the
// journal in the same transaction: one statement (foldJournal) moves the
// entries and events into run_trace and run_events and deletes the rows,
// and the run's row is written. Reads fold the row with the journal: the
// record and head of its last row are the run's, and its entries and
// events follow those of the tables.

// maxJournalRows bounds a run's journal, which each read of its trace or
// its events reads whole: the step that would pass it folds the journal,
// as a change of status does (about one commit in 64 of a run that keeps
// running writes its row), and updates the row as a step did before the
// journal (updateRunStep).
const maxJournalRows = 64

// insertJournal appends a row to a run's journal (journalArgs).
const insertJournal = `INSERT INTO run_journal (run_id, seq, trace_count, interrupt_id, calls_in_flight, last_event, record, trace, event_seqs, events)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`

// foldJournal moves the journal of run $1 into run_trace and run_events
// and deletes it, in one statement.
const foldJournal = `WITH folded AS (
	DELETE FROM run_journal WHERE run_id = $1 RETURNING trace_count - cardinality(trace) AS first, trace, event_seqs, events
), trace AS (
	INSERT INTO run_trace (run_id, seq, entry)
	SELECT $1, f.first + t.ord - 1, t.entry FROM folded AS f, unnest(f.trace) WITH ORDINALITY AS t (entry, ord)
)
INSERT INTO run_events (run_id, seq, record)
SELECT $1, e.seq, e.record FROM folded AS f, unnest(f.event_seqs, f.events) AS e (seq, record)`

// lastJournalRow is the head of the last row of run $1's journal; no row
// for a run with no journal.
const lastJournalRow = `SELECT seq, trace_count, interrupt_id, calls_in_flight, last_event
	FROM run_journal WHERE run_id = $1 ORDER BY seq DESC LIMIT 1`

// journalRecord, journalLastEvent and journalSeq are, in SQL, a run's
// record and the sequence number of its last event as reads fold them
// with its journal, and the seq of its journal's last row (0: none). They
// refer to the runs row as runs.
const (
	journalRecord    = `COALESCE((SELECT j.record FROM run_journal AS j WHERE j.run_id = runs.id ORDER BY j.seq DESC LIMIT 1), runs.record)`
	journalLastEvent = `GREATEST(runs.last_event, (SELECT max(j.last_event) FROM run_journal AS j WHERE j.run_id = runs.id))`
	journalSeq       = `COALESCE((SELECT max(j.seq) FROM run_journal AS j WHERE j.run_id = runs.id), 0)`
)

// selectTrace reads entries $2 to $2+$3 (NULL: to the end) of run $1's
// trace: those of run_trace, then those of its journal, which follow
// them. The journal's are few (maxJournalRows rows).
const selectTrace = `SELECT entry FROM (
	(SELECT seq, entry FROM run_trace WHERE run_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3)
	UNION ALL
	(SELECT j.trace_count - cardinality(j.trace) + t.ord - 1, t.entry
		FROM run_journal AS j, unnest(j.trace) WITH ORDINALITY AS t (entry, ord)
		WHERE j.run_id = $1 AND j.trace_count - cardinality(j.trace) + t.ord - 1 >= $2)
) AS trace (seq, entry) ORDER BY seq LIMIT $3`

// selectRunEvents reads the records of run $1's events after $2, at most
// $3 (NULL: all): those of run_events and of its journal, merged in order
// (the live events that AppendRunEvents appends while a run is running go
// to run_events, between those of its steps).
const selectRunEvents = `SELECT record FROM (
	(SELECT seq, record FROM run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3)
	UNION ALL
	(SELECT e.seq, e.record FROM run_journal AS j, unnest(j.event_seqs, j.events) AS e (seq, record)
		WHERE j.run_id = $1 AND e.seq > $2)
) AS events (seq, record) ORDER BY seq LIMIT $3`

// readJournalHead reads, in the batch that lockRun sends after it locks
// the run's row into l, the head of the last row of run id's journal, if
// it has one: that is then the run's (its status is the row's: only a
// step of a running run is journaled).
func readJournalHead(b *pgx.Batch, id string, l *lockedRun) {
	b.Queue(lastJournalRow, id).QueryRow(func(row pgx.Row) error {
		var (
			head      = store.RunHead{ID: id, Status: l.head.Status}
			lastEvent int64
		)
		err := row.Scan(&l.journal, &head.TraceCount, &head.InterruptID, &head.Calls, &lastEvent)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		l.head, l.lastEvent = head.Run(), max(l.lastEvent, lastEvent)
		return nil
	})
}

// queueJournal queues in b the append of a step of run row to its
// journal, after its row journal: its entries, from the trace's first
// `first`, and its events, whose last is the run's last event lastEvent.
func queueJournal(ctx context.Context, q querier, b *pgx.Batch, row runRow, journal, first int, entries []workflow.TraceEntry, events []store.RunEvent, lastEvent int64) error {
	_, trace, err := traceArgs(row.run.ID, first, entries, row.values)
	if err != nil {
		return err
	}
	seqs, records, err := eventArgs(events, row.values)
	if err != nil {
		return err
	}
	r := row.run
	b.Queue(insertJournal, r.ID, journal+1, r.TraceCount, row.interruptID, row.calls, lastEvent, row.record, trace, seqs, records)
	return queueValues(ctx, q, b, r.ID, row.values)
}
