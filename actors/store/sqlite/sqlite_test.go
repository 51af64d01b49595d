package sqlite_test

import (
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/actors/store/storetest"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, opts ...store.Option) store.Store {
		is := is.New(t)
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "mcpflow.db"), sqlite.WithStoreOptions(opts...))
		is.NoErr(err) // open the store
		return s
	})
}

func TestReopenKeepsData(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "mcpflow.db")

	s, err := sqlite.Open(ctx, path)
	is.NoErr(err)
	title := "kept"
	is.NoErr(s.CreateWorkspace(ctx, store.Workspace{ID: "ws", Revision: 1, Title: &title}))
	r := store.Run{ID: "run", Status: store.RunRunning}
	is.NoErr(s.CreateRun(ctx, r, nil))
	r.TraceCount = 1
	is.NoErr(s.RecordProgress(ctx, r, []workflow.TraceEntry{{NodeID: "fetch"}}))
	is.NoErr(s.Close())

	s, err = sqlite.Open(ctx, path) // migrations already applied: a no-op
	is.NoErr(err)
	defer s.Close()
	w, err := s.GetWorkspace(ctx, "ws")
	is.NoErr(err)
	is.Equal(*w.Title, "kept")
	trace, err := s.ReadTrace(ctx, "run", 0, 0)
	is.NoErr(err)
	is.Equal(len(trace), 1)
	is.Equal(trace[0].NodeID, "fetch")
	events, last, err := s.ReadRunEvents(ctx, "run", 0, 0)
	is.NoErr(err)
	is.Equal(last, int64(2)) // the run's events replay after a restart
	is.Equal([]string{events[0].Kind, events[1].Kind}, []string{store.RunEventStatusChanged, store.RunEventStepFinished})
}

func TestFilePermissions(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, "mcpflow.db")

	s, err := sqlite.Open(ctx, path)
	is.NoErr(err)
	defer s.Close()
	is.NoErr(s.CreateWorkspace(ctx, store.Workspace{ID: "ws", Revision: 1})) // writes the WAL

	for name, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, path: 0o600, path + "-wal": 0o600} {
		info, err := os.Stat(name)
		is.NoErr(err)
		is.Equal(info.Mode(), want) // owner only
	}
}

// TestAuthFilePermissions saves a secret: the database file and its WAL,
// which now hold it, are the owner's only.
func TestAuthFilePermissions(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state", "mcpflow.db")

	s, err := sqlite.Open(ctx, path)
	is.NoErr(err)
	defer s.Close()
	const secret = "tok-5d1e0b"
	is.NoErr(s.SaveAuth(ctx, store.AuthRecord{ID: "github", Scheme: "bearer", Payload: map[string]any{"access_token": secret}}))
	got, err := s.GetAuth(ctx, "github")
	is.NoErr(err)
	is.Equal(got.Payload["access_token"], secret)

	wal, err := os.ReadFile(path + "-wal")
	is.NoErr(err)
	is.True(strings.Contains(string(wal), secret)) // the secret is in the WAL (until a checkpoint moves it)...
	for _, name := range []string{path, path + "-wal", path + "-shm"} {
		info, err := os.Stat(name)
		is.NoErr(err)
		is.Equal(info.Mode(), os.FileMode(0o600)) // ...which, like the database, only its owner can read
	}
}

// TestReopenKeepsRecords reopens a store and checks what it kept.
func TestReopenKeepsRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcpflow.db")
	storetest.Reopen(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(t.Context(), path, sqlite.WithStoreOptions(store.WithMaxEvents(2)))
		is.New(t).NoErr(err)
		return s
	})
}

func TestRefusesNewerSchema(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "mcpflow.db")
	db, err := sql.Open("sqlite", path)
	is.NoErr(err)
	_, err = db.Exec("PRAGMA user_version = 999")
	is.NoErr(err)
	is.NoErr(db.Close())

	_, err = sqlite.Open(t.Context(), path)
	is.True(err != nil)                                   // a newer build wrote it
	is.True(strings.Contains(err.Error(), "version 999")) // and the error says so
}

// TestSealing runs the sealing suite on one SQLite store; what it keeps
// at rest is its database file, its WAL and its shared-memory index.
func TestSealing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcpflow.db")
	storetest.Sealing(t, func(t *testing.T, opts ...store.Option) (store.Store, error) {
		return sqlite.Open(t.Context(), path, sqlite.WithStoreOptions(opts...))
	}, func(t *testing.T) []byte {
		var kept []byte
		for _, name := range []string{path, path + "-wal", path + "-shm"} {
			data, err := os.ReadFile(name)
			if errors.Is(err, fs.ErrNotExist) {
				continue // no WAL once the last connection closed
			}
			is.New(t).NoErr(err)
			kept = append(kept, data...)
		}
		return kept
	})
}
