package engines_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/actors/store/sqlite/sqlitetest"
	"github.com/mcpflow/mcpflow/actors/store/storetest"
	"github.com/mcpflow/mcpflow/integration/engines"
)

// TestTheStorePassesItsConformanceOnCgoSQLite runs the store
// conformance suite on the SQLite store opened through mattn's cgo
// driver: the comparison measures the same store, not a lesser one.
func TestTheStorePassesItsConformanceOnCgoSQLite(t *testing.T) {
	storetest.Run(t, func(t *testing.T, opts ...store.Option) store.Store {
		is := is.New(t)
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "mcpflow.db"),
			sqlite.WithDriver(engines.CgoDriver), sqlite.WithStoreOptions(opts...))
		is.NoErr(err) // open the store on cgo SQLite
		return s
	})
}

func TestAWarmRunReplaysOnEitherSQLite(t *testing.T) {
	w, err := engines.WarmRun()
	is.New(t).NoErr(err)
	for _, engine := range []string{"modernc", engines.CgoDriver} {
		t.Run(engine, func(t *testing.T) {
			is := is.New(t)
			ctx := t.Context()
			s := sqlitetest.Open(t, driverOption(engine)...)
			is.NoErr(w.Replay(ctx, s, "run-ended"))
			is.NoErr(engines.Commit(ctx, s, engines.As(w[0], "run-running")))
			is.NoErr(engines.Commit(ctx, s, engines.As(w.Step(), "run-running"))) // its step, in the journal
			r, err := s.GetRun(ctx, "run-ended")
			is.NoErr(err)
			is.Equal(r.Status, store.RunCompleted)
			is.Equal(r.TraceCount, 1)
			r, err = s.GetRun(ctx, "run-running")
			is.NoErr(err)
			is.Equal(len(r.Checkpoint.Calls), 1) // the step's call in flight, from the journal
			runs, total, err := s.ListRuns(ctx, store.RunQuery{})
			is.NoErr(err) // the running run is ordered by mcpflow_time_key
			is.Equal(total, 2)
			is.Equal(len(runs), 2)
		})
	}
}

func TestAPebbleJournalReadsItsRowsBackInOrder(t *testing.T) {
	is := is.New(t)
	w, err := engines.WarmRun()
	is.NoErr(err)
	j, err := engines.OpenPebble(t.TempDir(), true)
	is.NoErr(err)
	defer func() { is.NoErr(j.Close()) }()
	step := w.Step()
	for seq := uint32(1); seq <= 3; seq++ {
		step.Run.TraceCount = int(seq) // the index of the row's first entry
		is.NoErr(j.Append(engines.As(step, "run-a"), seq))
	}
	is.NoErr(j.Append(engines.As(w.Step(), "run-a2"), 1)) // a run whose id extends run-a's
	rows, err := j.Rows("run-a")
	is.NoErr(err)
	is.Equal(len(rows), 3)
	for i, row := range rows {
		var fields []json.RawMessage
		is.NoErr(json.Unmarshal([]byte(row), &fields))
		is.Equal(len(fields), 4)                         // first entry, record, entries, events
		is.Equal(string(fields[0]), string(rune('1'+i))) // in order
		var r store.Run
		is.NoErr(json.Unmarshal(fields[1], &r))
		is.Equal(r.ID, "run-a")
	}
}

// driverOption opens a store through engine's driver: modernc's, which
// mcpflow uses, or another registered one.
func driverOption(engine string) []sqlite.Option {
	if engine == "modernc" {
		return nil
	}
	return []sqlite.Option{sqlite.WithDriver(engine)}
}

func TestASQLiteJournalReadsItsRowsBackOnEitherSQLite(t *testing.T) {
	w, err := engines.WarmRun()
	is.New(t).NoErr(err)
	for _, driverName := range []string{engines.ModerncDriver, engines.CgoDriver} {
		t.Run(driverName, func(t *testing.T) {
			is := is.New(t)
			ctx := t.Context()
			j, err := engines.OpenSQLiteJournal(ctx, driverName, filepath.Join(t.TempDir(), "journal.db"), sqlite.SyncFull)
			is.NoErr(err)
			defer func() { is.NoErr(j.Close()) }()
			is.NoErr(j.Append(ctx, engines.As(w.Step(), "run-a"), 7, 1))
			is.NoErr(j.Append(ctx, engines.As(w.Step(), "run-a"), 7, 2))
			is.NoErr(j.Append(ctx, engines.As(w.Step(), "run-b"), 8, 1))
			rows, err := j.Rows(ctx, 7)
			is.NoErr(err)
			is.Equal(len(rows), 2) // run 7's rows, not run 8's
			var fields []json.RawMessage
			is.NoErr(json.Unmarshal([]byte(rows[0]), &fields))
			is.Equal(len(fields), 4) // first entry, record, entries, events
		})
	}
}
