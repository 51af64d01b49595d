package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpflow/mcpflow/actors/store"
)

// The run journal. A step of a run that stays running (runStep) is one
// row of run_journal: the run's record after the step (its checkpoint:
// state, calls in flight), the step's trace entries and its run events.
// Its runs row, run_trace and run_events are not written: one row in a
// table that holds only the steps of the runs that are running, where a
// step commit wrote three (and moved the run in two indexes). The next
// commit that changes the run's status (its end, an interrupt, a
// recovery) folds the journal: it moves the entries and events into
// run_trace and run_events, deletes the journal's rows and writes the
// run's row. Reads fold the row with the journal: the record of its last
// row is the run's, and its entries and events follow those of the
// tables.
//
// A row's key is the run's rowid << 32 | seq (seq per run, from 1): the
// rows of a run are together, and a row of a rowid table is kept inline
// up to nearly a page, where a WITHOUT ROWID table keyed (run_id, seq)
// spills one over about 1,000 bytes (a record is more) to an overflow
// page. A run's rowid does not change while it exists (no VACUUM runs
// while the journal holds rows: see incrementalVacuum), and only a run
// that has ended, whose journal is folded, is deleted.

// maxJournalRows bounds a run's journal, which each read of its trace
// or its events reads whole: the step that would pass it folds the
// journal, as a change of status does (about one commit in 64 of a run
// that keeps running writes its row).
const maxJournalRows = 64

var (
	insertJournal = newWriteQuery(`INSERT INTO run_journal (key, run, first, trace, events, last_event)
		VALUES ((SELECT rowid << 32 FROM runs WHERE id = ?1) | ?2, ?3, ?4, ?5, ?6, ?7)`)
	selectJournal = newWriteQuery(`SELECT first, trace, events FROM run_journal WHERE key BETWEEN ` + journalFrom + ` AND ` + journalTo + ` ORDER BY key`)
	deleteJournal = newWriteQuery(`DELETE FROM run_journal WHERE key BETWEEN ` + journalFrom + ` AND ` + journalTo)
	// lastJournalRow is no row for a run with no journal.
	lastJournalRow = newWriteQuery(`SELECT key & 4294967295, run, last_event FROM run_journal WHERE key BETWEEN ` + journalFrom + ` AND ` + journalTo + ` ORDER BY key DESC LIMIT 1`)

	readJournal = newReadQuery(`SELECT first, trace, events FROM run_journal WHERE key BETWEEN ` + journalFrom + ` AND ` + journalTo + ` ORDER BY key`)
	// readJournalLast is the run's last event as its journal has it, 0
	// for none.
	readJournalLast = newReadQuery(`SELECT COALESCE(MAX(last_event), 0) FROM run_journal WHERE key BETWEEN ` + journalFrom + ` AND ` + journalTo)
)

// journalRun is the record of a run as reads fold it, in SQL: the run of
// its journal's last row, else its row's. It refers to the runs row as
// runs.
const journalRun = `COALESCE((SELECT j.run FROM run_journal AS j WHERE ` + journalOf + ` ORDER BY j.key DESC LIMIT 1), runs.record)`

// The first and last keys of the journal rows of run ?1, and the
// condition that a journal row j is of the run of the runs row runs.
const (
	journalFrom = `(SELECT rowid << 32 FROM runs WHERE id = ?1)`
	journalTo   = `(SELECT (rowid << 32) | 4294967295 FROM runs WHERE id = ?1)`
	journalOf   = `j.key BETWEEN runs.rowid << 32 AND (runs.rowid << 32) | 4294967295`
)

// appendJournal appends to run row's journal, in tx, the row of a step
// whose entries (encoded) and events follow the run's journal row
// journal (0: none).
func appendJournal(ctx context.Context, tx writeTx, row runRow, journal int64, encoded []string, events []store.RunEvent, lastSeq int64) error {
	r := row.run
	trace := "[" + strings.Join(encoded, ",") + "]"
	pairs := make([]string, len(events))
	for i, e := range events {
		text, err := store.EncodeRunEvent(e, row.values)
		if err != nil {
			return err
		}
		pairs[i] = fmt.Sprintf("[%d,%s]", e.Seq, text)
	}
	_, err := tx.exec(ctx, insertJournal, r.ID, journal+1, row.record, r.TraceCount-len(encoded), trace,
		"["+strings.Join(pairs, ",")+"]", lastSeqOf(events, lastSeq))
	if err != nil {
		return err
	}
	return insertValues(ctx, tx, r.ID, row.values)
}

// journalRow is what one journal row holds of its step: its trace
// entries, from index first, and its events, each as a durable store
// keeps them (the text of a packed entry; store.EncodeRunEvent's).
type journalRow struct {
	first   int
	entries []json.RawMessage
	events  []journalEvent
}

// journalEvent is one run event of a journal row: its sequence number and
// its text.
type journalEvent struct {
	seq  int64
	text json.RawMessage
}

// scanJournal reads the rows of a run's journal, in order.
func scanJournal(rows *sql.Rows, err error) ([]journalRow, error) {
	if err != nil {
		return nil, err
	}
	var list []journalRow
	for rows.Next() {
		var (
			j             journalRow
			trace, events []byte
			pairs         [][2]json.RawMessage
		)
		if err := rows.Scan(&j.first, &trace, &events); err != nil {
			return nil, errors.Join(err, rows.Close())
		}
		if err := json.Unmarshal(trace, &j.entries); err != nil {
			return nil, errors.Join(fmt.Errorf("read a journal row's trace: %w", err), rows.Close())
		}
		if err := json.Unmarshal(events, &pairs); err != nil {
			return nil, errors.Join(fmt.Errorf("read a journal row's events: %w", err), rows.Close())
		}
		for _, p := range pairs {
			var e journalEvent
			if err := json.Unmarshal(p[0], &e.seq); err != nil {
				return nil, errors.Join(fmt.Errorf("read a journal row's events: %w", err), rows.Close())
			}
			e.text = p[1]
			j.events = append(j.events, e)
		}
		list = append(list, j)
	}
	return list, errors.Join(rows.Err(), rows.Close())
}

// scanEvents reads the sequence numbers and the texts of stored run
// events.
func scanEvents(rows *sql.Rows, err error) ([]journalEvent, error) {
	if err != nil {
		return nil, err
	}
	var list []journalEvent
	for rows.Next() {
		var (
			e    journalEvent
			text []byte
		)
		if err := rows.Scan(&e.seq, &text); err != nil {
			return nil, errors.Join(err, rows.Close())
		}
		e.text = text
		list = append(list, e)
	}
	return list, errors.Join(rows.Err(), rows.Close())
}

// folded is a run's journal as its fold takes it: the trace entries and
// the run events of its rows, as the values of insertTraceEntries and
// insertRunEvents. The commit that folds inserts them ahead of its own,
// in one statement each.
type folded struct{ trace, events []any }

// foldJournal takes run id's journal out of tx: it deletes its rows and
// returns what they held, for run_trace and run_events.
func foldJournal(ctx context.Context, tx writeTx, id string) (folded, error) {
	journal, err := scanJournal(tx.rows(ctx, selectJournal, id))
	if err != nil || len(journal) == 0 {
		return folded{}, err
	}
	var f folded
	for _, j := range journal {
		for i, e := range j.entries {
			f.trace = append(f.trace, id, j.first+i, string(e))
		}
		for _, e := range j.events {
			f.events = append(f.events, id, e.seq, string(e.text))
		}
	}
	if _, err := tx.exec(ctx, deleteJournal, id); err != nil {
		return folded{}, err
	}
	return f, nil
}

// journalEntries are the trace entries of a journal at index start or
// after, up to limit (< 0: no limit), as stored.
func journalEntries(journal []journalRow, start, limit int) [][]byte {
	var texts [][]byte
	for _, j := range journal {
		for i, e := range j.entries {
			if j.first+i >= start && (limit < 0 || len(texts) < limit) {
				texts = append(texts, e)
			}
		}
	}
	return texts
}

// mergeEvents returns the texts of the events of both lists (each in
// sequence order) after afterSeq, in sequence order, up to limit (< 0:
// no limit).
func mergeEvents(stored []journalEvent, journal []journalRow, afterSeq int64, limit int) [][]byte {
	all := stored
	for _, j := range journal {
		for _, e := range j.events {
			if e.seq > afterSeq {
				all = append(all, e)
			}
		}
	}
	slices.SortFunc(all, func(a, b journalEvent) int { return cmp.Compare(a.seq, b.seq) })
	if limit >= 0 && len(all) > limit {
		all = all[:limit]
	}
	texts := make([][]byte, len(all))
	for i, e := range all {
		texts[i] = e.text
	}
	return texts
}
