package sqlite

import (
	"context"
	"database/sql"
	"fmt"
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
}

// migrate brings the schema to the current version in one transaction. It
// refuses a database whose schema is newer than this build knows.
func migrate(ctx context.Context, db *sql.DB) error {
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
		}
		// PRAGMA takes no parameters; the value is an int.
		_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(migrations)))
		return err
	})
}
