package sqlite

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/storetest"
)

// TestMigrateFromVersion1 opens a database that the first schema version
// wrote: Open brings it to the current version and keeps its records.
func TestMigrateFromVersion1(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	path, db := oldSchema(t, 1)
	_, err := db.ExecContext(ctx, `INSERT INTO deployments (id, record) VALUES ('dep', '{"id":"dep","drift_policy":"warn"}')`)
	is.NoErr(err)
	is.NoErr(db.Close())

	s, err := Open(ctx, path)
	is.NoErr(err)
	defer s.Close()
	var version int
	is.NoErr(s.read.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version))
	is.Equal(version, len(migrations)) // migrated to the current version
	d, err := s.GetDeployment(ctx, "dep")
	is.NoErr(err)
	is.Equal(d.DriftPolicy, "warn") // records of version 1 stay
	is.NoErr(s.SaveAuth(ctx, store.AuthRecord{ID: "a", Scheme: "bearer"}))
	is.NoErr(s.PutRegistryEntry(ctx, store.RegistryEntry{ID: "src", Kind: "mcp"}))
	seq, err := s.AppendEvent(ctx, store.Event{Kind: "auth_saved"})
	is.NoErr(err)
	is.Equal(seq, int64(1)) // the tables of version 2 work
	is.NoErr(s.CreateRun(ctx, store.Run{ID: "run", Status: store.RunRunning}, nil))
	_, last, err := s.ReadRunEvents(ctx, "run", 0, 0)
	is.NoErr(err)
	is.Equal(last, int64(1)) // and those of version 3
}

// TestMigrateGivesFinishedRunsTheirExpiry opens a database of schema
// version 3, before retention: its finished runs expire the store's
// retention after their end, and its interrupted runs never.
func TestMigrateGivesFinishedRunsTheirExpiry(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	path, db := oldSchema(t, 3)
	end := time.Date(2026, 3, 1, 12, 0, 0, 500_000_000, time.UTC)
	for _, r := range []store.Run{{ID: "done", Status: store.RunCompleted, UpdatedAt: end}, {ID: "waiting", Status: store.RunInterrupted, UpdatedAt: end}} {
		record, err := encode(r)
		is.NoErr(err)
		_, err = db.ExecContext(ctx, `INSERT INTO runs (id, status, updated_at, trace_count, record) VALUES (?, ?, ?, 0, ?)`,
			r.ID, r.Status, timeKey(r.UpdatedAt), record)
		is.NoErr(err)
	}
	is.NoErr(db.Close())

	s, err := Open(ctx, path, WithStoreOptions(store.WithRetention(time.Hour)))
	is.NoErr(err)
	defer s.Close()
	storetest.ExpiresAfterMigration(t, s, end, time.Hour)
}

// oldSchema makes a database of schema version `version`, as a build of
// that version left it (without incremental vacuum), and returns its path
// and a connection to it for the test to fill and close.
func oldSchema(t *testing.T, version int) (string, *sql.DB) {
	is := is.New(t)
	is.Helper()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "mcpflow.db")
	is.NoErr(createFile(path))
	db, err := sql.Open("sqlite", path)
	is.NoErr(err)
	for _, m := range migrations[:version] {
		_, err = db.ExecContext(ctx, m)
		is.NoErr(err)
	}
	_, err = db.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", version))
	is.NoErr(err)
	return path, db
}
