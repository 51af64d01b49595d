package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// migrations are the schema changes in order: applying migrations[i] brings
// the schema to version i+1, which PRAGMA user_version records. Append new
// migrations; never edit one that has shipped.
//
// Each table keeps its records as JSON text in record, plus the columns its
// keys, filters and orderings need.
var migrations = []string{
	`
CREATE TABLE workspaces (
	id       TEXT PRIMARY KEY,
	revision INTEGER NOT NULL,
	record   TEXT NOT NULL
) STRICT;

CREATE TABLE artifacts (
	id           TEXT NOT NULL,
	version      INTEGER NOT NULL,
	kind         TEXT NOT NULL,
	title        TEXT NOT NULL,
	description  TEXT,
	content_hash TEXT NOT NULL, -- store.ArtifactHash of the record
	record       TEXT NOT NULL,
	PRIMARY KEY (id, version)
) STRICT;

CREATE TABLE deployments (
	id     TEXT PRIMARY KEY,
	record TEXT NOT NULL
) STRICT;

CREATE TABLE runs (
	id          TEXT PRIMARY KEY,
	status      TEXT NOT NULL,
	updated_at  TEXT NOT NULL, -- timeKey: sorts in time order
	trace_count INTEGER NOT NULL,
	record      TEXT NOT NULL
) STRICT;

CREATE INDEX runs_by_update ON runs (updated_at DESC, id DESC);
CREATE INDEX runs_by_status ON runs (status, updated_at DESC, id DESC);

CREATE TABLE run_trace (
	run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	seq    INTEGER NOT NULL, -- position in the trace, from 0
	entry  TEXT NOT NULL,
	PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE catalogs (
	connection_id TEXT PRIMARY KEY,
	record        TEXT NOT NULL
) STRICT;
`,
	`
-- record holds the secret payload: the database file is mode 0600.
CREATE TABLE auth_records (
	id     TEXT PRIMARY KEY,
	record TEXT NOT NULL
) STRICT;

CREATE TABLE source_registry (
	id     TEXT PRIMARY KEY,
	record TEXT NOT NULL
) STRICT;

-- AUTOINCREMENT: a sequence number is never reused, even once retention
-- has dropped every event below it. record is the event with seq 0.
CREATE TABLE events (
	seq    INTEGER PRIMARY KEY AUTOINCREMENT,
	record TEXT NOT NULL
) STRICT;
`,
	`
-- Each run's event log (store.RunEvent), appended in the transaction that
-- commits the change it describes. Runs stored before this version have
-- no events.
CREATE TABLE run_events (
	run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	seq    INTEGER NOT NULL, -- per run, from 1, no gaps
	record TEXT NOT NULL,
	PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;
`,
	`
-- Retention (store.RunRetention). expires_at is when a finished run may
-- be pruned (store.RunExpiry, as timeKey text): NULL for a run that has
-- not ended, or that is kept for ever. Runs that ended before this
-- version get the store's retention from their end (see backfillExpiry).
ALTER TABLE runs ADD COLUMN expires_at TEXT;
CREATE INDEX runs_by_expiry ON runs (expires_at, id) WHERE expires_at IS NOT NULL;

-- The runs retention pruned, kept for a time so that looking one up says
-- "pruned" rather than "not found". pruned_at is timeKey text.
CREATE TABLE run_tombstones (
	run_id    TEXT PRIMARY KEY,
	pruned_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX run_tombstones_by_time ON run_tombstones (pruned_at);
`,
	`
-- What a commit compares of the run it changes (store.NewRunEvents,
-- store.RunAdminEvents), in columns of its own so that a commit reads it
-- without decoding the stored record: the id of the interrupt the run
-- waits in (NULL for none), the ids of the calls its checkpoint lists as
-- in flight (a JSON array of text, sorted), and the sequence number of
-- its last event (0 for none). The runs stored before this version get
-- them from their records and their event logs.
ALTER TABLE runs ADD COLUMN interrupt_id TEXT;
ALTER TABLE runs ADD COLUMN calls_in_flight TEXT NOT NULL DEFAULT '[]';
ALTER TABLE runs ADD COLUMN last_event INTEGER NOT NULL DEFAULT 0;
UPDATE runs SET
	interrupt_id = json_extract(record, '$.interrupt.id'),
	calls_in_flight = (SELECT json_group_array(key) FROM (SELECT key FROM json_each(runs.record, '$.checkpoint.calls') ORDER BY key)),
	last_event = (SELECT COALESCE(MAX(seq), 0) FROM run_events WHERE run_id = runs.id);
`,
	`
-- The admin event log without AUTOINCREMENT, which wrote its counter in
-- sqlite_sequence, a page more, at every append. A sequence number is
-- still never reused: a new event takes the greatest kept plus one, and
-- retention always keeps the newest event (store.WithMaxEvents keeps at
-- least one), so the greatest kept is the last appended.
CREATE TABLE events_numbered (
	seq    INTEGER PRIMARY KEY,
	record TEXT NOT NULL
) STRICT;
INSERT INTO events_numbered (seq, record) SELECT seq, record FROM events;
DROP TABLE events;
ALTER TABLE events_numbered RENAME TO events;
`,
	`
-- The large values of each run's records (store.Values): a value of
-- store.ValueMin bytes or more is kept here once per run, and the run's
-- record, trace entries and events that hold it refer to it by key
-- (store.Packed). The rows written before this version are plain JSON,
-- which is read as it is.
CREATE TABLE run_values (
	run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	key    TEXT NOT NULL, -- store.ValueKey of value
	value  TEXT NOT NULL,
	PRIMARY KEY (run_id, key)
) STRICT;
`,
	`
-- The idempotency keys of run starts (store.IdempotencyKeys): each
-- claimed by the run created with it, in the same transaction, until
-- expires_at (Unix milliseconds). No reference to runs: a key outlives
-- the pruning of its run, until retention drops it once expired.
CREATE TABLE idempotency_keys (
	key           TEXT PRIMARY KEY,
	run_id        TEXT NOT NULL,
	deployment_id TEXT NOT NULL,
	input_hash    TEXT NOT NULL,
	expires_at    INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);
`,
	`
-- Signed webhooks (store.Webhooks): each definition's record holds its
-- secrets, sealed when the store seals (the database file is mode 0600),
-- and each delivery id a webhook has taken, until expires_at (timeKey
-- text), so that a replayed delivery starts nothing; retention prunes
-- the expired ones.
CREATE TABLE webhooks (
	id     TEXT PRIMARY KEY,
	record TEXT NOT NULL
) STRICT;

CREATE TABLE webhook_deliveries (
	hook_id     TEXT NOT NULL,
	delivery_id TEXT NOT NULL,
	expires_at  TEXT NOT NULL,
	PRIMARY KEY (hook_id, delivery_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX webhook_deliveries_by_expiry ON webhook_deliveries (expires_at);
`,
	`
-- Schedules (store.Schedules): each one's definition (record) and what
-- the scheduling loop records of it (state), written apart so that an
-- update and a fire never overwrite each other.
CREATE TABLE schedules (
	id     TEXT PRIMARY KEY,
	record TEXT NOT NULL,
	state  TEXT NOT NULL
) STRICT;
`,
	`
-- Each webhook's log of recent deliveries (store.WebhookDelivery, in
-- record): what each was answered, never its body, a header's value or a
-- secret. seq orders a webhook's entries; each insert deletes that
-- webhook's entries past the newest store.RecentDeliveries.
CREATE TABLE webhook_delivery_log (
	seq     INTEGER PRIMARY KEY,
	hook_id TEXT NOT NULL,
	record  TEXT NOT NULL
) STRICT;
CREATE INDEX webhook_delivery_log_by_hook ON webhook_delivery_log (hook_id, seq);
`,
	`
-- The run journal (see journal.go): a row per step of a running run,
-- since its last change of status, which folds it into runs, run_trace
-- and run_events. run is the run's record after the step; trace the
-- step's entries (a JSON array, from index first), events its run events
-- (a JSON array of [sequence, text]), last_event the run's last event's
-- sequence after it. No reference to runs: a run has rows here only
-- while it runs, and only a run that has ended is deleted.
CREATE TABLE run_journal (
	key        INTEGER PRIMARY KEY, -- the run's rowid << 32 | seq, per run from 1
	run        TEXT NOT NULL,
	first      INTEGER NOT NULL,
	trace      TEXT NOT NULL,
	events     TEXT NOT NULL,
	last_event INTEGER NOT NULL
) STRICT;
`,
}

// retentionVersion is the schema version that adds runs.expires_at.
const retentionVersion = 4

// backfillExpiry gives the runs that ended before the schema had
// runs.expires_at their expiry: their end plus retention (0: kept for
// ever), in tx. Their deployments could not set a retention then.
func backfillExpiry(ctx context.Context, tx *sql.Tx, retention time.Duration) error {
	if retention <= 0 {
		return nil
	}
	// updated_at is timeKey text: the date and time to the second, then
	// the fraction and the zone, which adding whole seconds keeps.
	_, err := tx.ExecContext(ctx, `UPDATE runs SET expires_at = strftime('%Y-%m-%dT%H:%M:%S', substr(updated_at, 1, 19), ?) || substr(updated_at, 20)
		WHERE status IN ('completed', 'failed', 'cancelled')`, fmt.Sprintf("+%d seconds", int64(retention/time.Second)))
	if err != nil {
		return fmt.Errorf("give the finished runs their expiry: %w", err)
	}
	return nil
}

// migrate brings the schema to the current version in one transaction. It
// refuses a database whose schema is newer than this build knows.
// retention is the store's (store.Options), which the runs that ended
// before the schema kept expiry times are given.
func migrate(ctx context.Context, db *sql.DB, retention time.Duration) error {
	return inTx(ctx, db, nil, func(tx *sql.Tx) error {
		var version int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		if version > len(migrations) {
			return fmt.Errorf("schema version %d is newer than this build knows (%d)", version, len(migrations))
		}
		for v := version; v < len(migrations); v++ {
			if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
				return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
			}
			if v+1 == retentionVersion {
				if err := backfillExpiry(ctx, tx, retention); err != nil {
					return err
				}
			}
		}
		// PRAGMA takes no parameters; the value is an int.
		_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(migrations)))
		return err
	})
}
