package sqlite

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
)

// TestMigrateFromVersion1 opens a database that the first schema version
// wrote: Open brings it to the current version and keeps its records.
func TestMigrateFromVersion1(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "mcpflow.db")
	is.NoErr(createFile(path))
	db, err := sql.Open("sqlite", path)
	is.NoErr(err)
	_, err = db.ExecContext(ctx, migrations[0])
	is.NoErr(err)
	_, err = db.ExecContext(ctx, `PRAGMA user_version = 1`)
	is.NoErr(err)
	_, err = db.ExecContext(ctx, `INSERT INTO deployments (id, record) VALUES ('dep', '{"id":"dep","drift_policy":"warn"}')`)
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
