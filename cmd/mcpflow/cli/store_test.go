package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
)

// TestStoreMigrate copies SQLite stores into PostgreSQL, named each way
// --from takes, against a real server.
func TestStoreMigrate(t *testing.T) {
	srv := pgtest.Start(t)
	t.Run("root", func(t *testing.T) {
		is := is.New(t)
		root := sqliteFixture(t)
		dsn := srv.NewDatabase(t)
		code, out, errOut := runCLI("store", "migrate", "--from", root, "--to", dsn)
		is.Equal(errOut, "")
		is.Equal(code, ExitOK)
		is.True(strings.Contains(out, "copied 7 records from "+filepath.Join(root, app.DatabaseFile))) // says what
		is.True(strings.Contains(out, "the counts match"))
		checkMigrated(t, dsn)
	})
	t.Run("config and json", func(t *testing.T) {
		is := is.New(t)
		root := sqliteFixture(t)
		cfg := filepath.Join(t.TempDir(), "mcpflow.json")
		is.NoErr(os.WriteFile(cfg, []byte(`{"version":1,"server":{"store":{"root":"`+root+`"}}}`), 0o600))
		t.Setenv(envPGDSN, srv.NewDatabase(t)) // the DSN from the environment
		code, out, _ := runCLI("store", "migrate", "--from", cfg, "-o", "json")
		is.Equal(code, ExitOK)
		var res migrateResult
		is.NoErr(json.Unmarshal([]byte(out), &res))
		is.Equal(res.Copied, postgres.Counts{Deployments: 2, AuthRecords: 1, RegistryEntries: 1, Events: 3})
		is.Equal(res.Total, 7)
		checkMigrated(t, os.Getenv(envPGDSN))
	})
	t.Run("database file, twice", func(t *testing.T) {
		is := is.New(t)
		file := filepath.Join(sqliteFixture(t), app.DatabaseFile)
		dsn := srv.NewDatabase(t)
		code, _, _ := runCLI("store", "migrate", "--from", file, "--to", dsn)
		is.Equal(code, ExitOK)
		code, _, errOut := runCLI("store", "migrate", "--from", file, "--to", dsn)
		is.Equal(code, ExitError)                                    // the database holds records now
		is.True(strings.Contains(errOut, "already holds 7 records")) // says why
		checkMigrated(t, dsn)                                        // and is left as it was
	})
}

// TestStoreMigrateRefuses: no store where --from points, a store a server
// holds, or a PostgreSQL that cannot be reached, whose password no error
// shows.
func TestStoreMigrateRefuses(t *testing.T) {
	const password = "pw-c41d"
	unreachable := "postgres://mcpflow:" + password + "@127.0.0.1:1/mcpflow?connect_timeout=5"
	t.Run("no store", func(t *testing.T) {
		is := is.New(t)
		root := t.TempDir()
		code, _, errOut := runCLI("store", "migrate", "--from", root, "--to", unreachable)
		is.Equal(code, ExitError)
		is.True(strings.Contains(errOut, "no SQLite store at")) // says why
		_, err := os.Stat(filepath.Join(root, app.DatabaseFile))
		is.True(os.IsNotExist(err)) // and made none
	})
	t.Run("in use", func(t *testing.T) {
		is := is.New(t)
		root := sqliteFixture(t)
		lock, err := app.LockStore(root)
		is.NoErr(err)
		defer lock.Release()
		code, _, errOut := runCLI("store", "migrate", "--from", root, "--to", unreachable)
		is.Equal(code, ExitError)
		is.True(strings.Contains(errOut, "in use")) // a server holds it
	})
	t.Run("unreachable", func(t *testing.T) {
		is := is.New(t)
		code, _, errOut := runCLI("store", "migrate", "--from", sqliteFixture(t), "--to", unreachable)
		is.Equal(code, ExitError)
		is.True(strings.Contains(errOut, "postgres://mcpflow@127.0.0.1:1/mcpflow")) // names the database
		is.True(!strings.Contains(errOut, password))                                // never the password
	})
	t.Run("no dsn", func(t *testing.T) {
		is := is.New(t)
		t.Setenv(envPGDSN, "")
		code, _, errOut := runCLI("store", "migrate", "--from", sqliteFixture(t))
		is.Equal(code, ExitError)
		is.True(strings.Contains(errOut, envPGDSN)) // says where a DSN comes from
	})
}

// sqliteFixture makes a SQLite store root holding 7 records: 2
// deployments, an auth record, a registry entry and 3 events.
func sqliteFixture(t *testing.T) string {
	t.Helper()
	is := is.New(t)
	ctx := t.Context()
	root := t.TempDir()
	s, err := sqlite.Open(ctx, filepath.Join(root, app.DatabaseFile))
	is.NoErr(err)
	defer s.Close()
	for _, id := range []string{"dep-a", "dep-b"} {
		is.NoErr(s.SaveDeployment(ctx, store.Deployment{ID: id, ArtifactID: "wf", ArtifactVersion: 1, DriftPolicy: "warn"}))
	}
	is.NoErr(s.SaveAuth(ctx, store.AuthRecord{ID: "web", Scheme: "bearer", Payload: map[string]any{"token": "s3cret"}}))
	is.NoErr(s.PutRegistryEntry(ctx, store.RegistryEntry{ID: "web.default", Kind: "mcp", Enabled: true}))
	for range 3 {
		_, err := s.AppendEvent(ctx, store.Event{Kind: "auth_saved"})
		is.NoErr(err)
	}
	return root
}

// checkMigrated checks that the PostgreSQL store at dsn holds
// sqliteFixture's records.
func checkMigrated(t *testing.T, dsn string) {
	t.Helper()
	is := is.New(t)
	ctx := t.Context()
	s, err := postgres.Open(ctx, dsn)
	is.NoErr(err)
	defer s.Close()
	deps, err := s.ListDeployments(ctx)
	is.NoErr(err)
	is.Equal(len(deps), 2)
	is.Equal(deps[1], store.Deployment{ID: "dep-b", ArtifactID: "wf", ArtifactVersion: 1, DriftPolicy: "warn"})
	auth, err := s.GetAuth(ctx, "web")
	is.NoErr(err)
	is.Equal(auth.Payload["token"], "s3cret") // secrets too
	last, err := s.LastEventSeq(ctx)
	is.NoErr(err)
	is.Equal(last, int64(3))
}
