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
	"github.com/mcpflow/mcpflow/actors/workflow"
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

// TestMigrateGivesRunsTheirHeads opens a database of schema version 4,
// before the runs' heads had columns of their own: a commit of a run
// stored then compares it as its record has it (its calls in flight, its
// interrupt) and numbers its events after those it has.
func TestMigrateGivesRunsTheirHeads(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	path, db := oldSchema(t, 4)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	running := store.Run{ID: "running", Status: store.RunRunning, UpdatedAt: at,
		Checkpoint: &workflow.Snapshot{Calls: map[string]workflow.Call{"c1": {ID: "c1", NodeID: "a"}}}}
	waiting := store.Run{ID: "waiting", Status: store.RunInterrupted, UpdatedAt: at, Interrupt: &workflow.Interrupt{ID: "i1"}}
	for _, r := range []store.Run{running, waiting} {
		record, err := encode(r)
		is.NoErr(err)
		_, err = db.ExecContext(ctx, `INSERT INTO runs (id, status, updated_at, trace_count, record) VALUES (?, ?, ?, 0, ?)`,
			r.ID, r.Status, timeKey(r.UpdatedAt), record)
		is.NoErr(err)
		for seq := 1; seq <= 2; seq++ {
			_, err = db.ExecContext(ctx, `INSERT INTO run_events (run_id, seq, record) VALUES (?, ?, '{}')`, r.ID, seq)
			is.NoErr(err)
		}
	}
	is.NoErr(db.Close())

	s, err := Open(ctx, path)
	is.NoErr(err)
	defer s.Close()
	// c1 stays in flight and c2 goes out: only c2 starts.
	running.Checkpoint.Calls["c2"] = workflow.Call{ID: "c2", NodeID: "b"}
	is.NoErr(s.RecordProgress(ctx, running, nil))
	events, last, err := s.ReadRunEvents(ctx, running.ID, 2, 0)
	is.NoErr(err)
	is.Equal(last, int64(3))                            // numbered after the two it had
	is.Equal(len(events), 1)                            // one event,
	is.Equal(events[0].Kind, store.RunEventStepStarted) // c2's start
	is.Equal(events[0].Step.CallID, "c2")
	// Still waiting in i1: no new interrupted event, nor a status one.
	is.NoErr(s.RecordProgress(ctx, waiting, nil))
	_, last, err = s.ReadRunEvents(ctx, waiting.ID, 0, 0)
	is.NoErr(err)
	is.Equal(last, int64(2))
}

// TestMigrateKeepsTheEventNumbers opens a database of schema version 5,
// whose admin event log counted with AUTOINCREMENT: its events keep their
// numbers, and the next one follows the last.
func TestMigrateKeepsTheEventNumbers(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	path, db := oldSchema(t, 5)
	for seq := 5; seq <= 7; seq++ { // retention dropped 1 to 4
		_, err := db.ExecContext(ctx, `INSERT INTO events (seq, record) VALUES (?, ?)`, seq, fmt.Sprintf(`{"kind":"k%d"}`, seq))
		is.NoErr(err)
	}
	is.NoErr(db.Close())

	s, err := Open(ctx, path)
	is.NoErr(err)
	defer s.Close()
	seq, err := s.AppendEvent(ctx, store.Event{Kind: "k8"})
	is.NoErr(err)
	is.Equal(seq, int64(8)) // after the last kept
	events, err := s.ListEvents(ctx, 0, 0)
	is.NoErr(err)
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, fmt.Sprintf("%d:%s", e.Seq, e.Kind))
	}
	is.Equal(kinds, []string{"5:k5", "6:k6", "7:k7", "8:k8"}) // kept, in order, with their numbers
}
