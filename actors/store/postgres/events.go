package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpflow/mcpflow/actors/store"
)

// Admin events are numbered after the commits that append them
// (migration 4): a run's commit queues its admin events in event_queue,
// and once it has committed, a numbering (numberEvents) moves every queued
// event into events under the next numbers. Numberings hold eventLock, so
// they run one at a time and give numbers in commit order with no gap, and
// one numbering numbers the events of every commit before it: commits that
// append admin events no longer wait for one another's flush.

// eventLock is the key of the transaction-level advisory lock that each
// numbering holds. ("mcpflowe" in ASCII: mcpflow's events.)
const eventLock int64 = 0x6d6370666c6f7765

// numberTimeout bounds a numbering after a commit, which outlives the
// caller's context: the commit is done, and its events should be
// numbered even when the caller stops waiting.
const numberTimeout = 10 * time.Second

// enqueueEvents is the insert of events into event_queue, $1 their records,
// queued in the order given.
const enqueueEvents = `INSERT INTO event_queue (record)
SELECT record FROM unnest($1::text[]) WITH ORDINALITY AS e (record, ord) ORDER BY ord`

// numberQueuedEvents moves every queued event, in the order of their ids,
// then the events $1 (records), in their order, into events under the
// numbers after event_counter's, keeps only the newest $2 of the log (an
// event that falls out at once is not inserted), and moves the counter to
// the last number given, which it returns; no row when there was nothing
// to number. Every step reads the snapshot of the statement's start, which
// the lock taken before it makes the last numbering's commit part of.
const numberQueuedEvents = `WITH queued AS (
	DELETE FROM event_queue RETURNING id, record
), pending AS (
	SELECT 0 AS part, id AS ord, record FROM queued
	UNION ALL
	SELECT 1, ord, record FROM unnest($1::text[]) WITH ORDINALITY AS e (record, ord)
), numbered AS (
	SELECT (SELECT last_seq FROM event_counter) + row_number() OVER (ORDER BY part, ord) AS seq, record FROM pending
), last AS (
	SELECT max(seq) AS seq FROM numbered
), kept AS (
	INSERT INTO events (seq, record) SELECT n.seq, n.record FROM numbered n, last WHERE n.seq > last.seq - $2
), dropped AS (
	DELETE FROM events USING last WHERE events.seq <= last.seq - $2
)
UPDATE event_counter SET last_seq = last.seq FROM last WHERE last.seq IS NOT NULL RETURNING last_seq`

// AppendEvent implements store.Events: one numbering numbers e after the
// events queued before it.
func (s *Store) AppendEvent(ctx context.Context, e store.Event) (seq int64, err error) {
	defer wrap(&err, "append event %q", e.Kind)
	record, err := eventRecords([]store.Event{e})
	if err != nil {
		return 0, err
	}
	seq, err = s.numberEvents(ctx, record)
	if err == nil {
		s.announce.adminEvents(seq)
	}
	return seq, err
}

// eventRecords are the records of events, as the events table keeps them
// (seq 0: the seq column holds it).
func eventRecords(events []store.Event) ([]string, error) {
	records := make([]string, len(events))
	for i, e := range events {
		e.Seq = 0
		var err error
		if records[i], err = encode(e); err != nil {
			return nil, err
		}
	}
	return records, nil
}

// numberEvents is a numbering: it takes eventLock, then moves the queued
// events and then the events of records into the log under the next
// numbers. It returns the last number given, 0 when there was nothing to
// number. A numbering that finds nothing writes nothing, so its commit
// waits for no flush.
//
// It is one batch sent outside any transaction, which PostgreSQL runs as
// one implicit transaction that commits at the batch's end: the lock is
// held while the server numbers and flushes, never across a round trip to
// this process, which would make every numbering queued behind it wait
// for this process to be scheduled.
func (s *Store) numberEvents(ctx context.Context, records []string) (last int64, err error) {
	b := &pgx.Batch{}
	// The planner's estimates of these small tables can pass
	// jit_above_cost, and compiling the statement took 0.3 s, all of it
	// under the lock. (set_config, as SET LOCAL needs a transaction
	// block.)
	b.Queue(`SELECT set_config('jit', 'off', true)`)
	b.Queue(`SELECT pg_advisory_xact_lock($1)`, eventLock)
	b.Queue(numberQueuedEvents, records, int64(s.maxEvents)).QueryRow(func(row pgx.Row) error {
		err := row.Scan(&last)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	err = s.pool.SendBatch(ctx, b).Close()
	return last, err
}

// commit runs fn in a read-write transaction and then sends b, the batch
// fn queued its writes in; fn returns the admin events its writes append,
// which are queued in event_queue in the same batch. Once the transaction
// has committed, a numbering numbers them, within numberTimeout, before
// commit returns. If that numbering fails, the commit stands and its
// events wait in the queue for the next numbering (by any writer, or by
// the next Open): the failure is logged, not returned, since the commit
// is durable.
func (s *Store) commit(ctx context.Context, fn func(tx pgx.Tx, b *pgx.Batch) ([]store.Event, error)) error {
	var queued bool
	err := s.update(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		events, err := fn(tx, b)
		if err != nil {
			return err
		}
		if len(events) > 0 {
			records, err := eventRecords(events)
			if err != nil {
				return err
			}
			b.Queue(enqueueEvents, records)
			queued = true
		}
		if b.Len() == 0 {
			return nil
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil || !queued {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), numberTimeout)
	defer cancel()
	last, err := s.numberEvents(ctx, nil)
	if err != nil {
		slog.Warn("admin events committed but not numbered yet; the next numbering will", "err", err)
	}
	s.announce.adminEvents(last)
	return nil
}

// ListEvents implements store.Events.
func (s *Store) ListEvents(ctx context.Context, afterSeq int64, limit int) (_ []store.Event, err error) {
	defer wrap(&err, "list events")
	rows, err := s.pool.Query(ctx,
		`SELECT seq, record FROM events WHERE seq > $1 ORDER BY seq LIMIT $2`, afterSeq, limitArg(limit))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Event, error) {
		var e store.Event
		var seq int64
		var record []byte
		if err := row.Scan(&seq, &record); err != nil {
			return e, err
		}
		err := json.Unmarshal(record, &e)
		e.Seq = seq
		return e, err
	})
}

// LastEventSeq implements store.Events.
func (s *Store) LastEventSeq(ctx context.Context) (last int64, err error) {
	defer wrap(&err, "read the last event's sequence number")
	err = s.pool.QueryRow(ctx, `SELECT last_seq FROM event_counter`).Scan(&last)
	return last, err
}
