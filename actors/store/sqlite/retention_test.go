package sqlite_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/actors/store/storetest"
)

// TestTheStoreFileStopsGrowingUnderASteadyLoad runs 30 s of a steady
// load (on a clock of ticks, not the wall's) with a retention of 2 s: once
// the first runs expire (and the admin event log holds its 1,000), the
// pages their pruning frees hold the next ones, and the database file
// grows no more. The baseline is the same load on a store that prunes
// nothing: the growth over the last 20 s, with pruning, is under a
// twentieth of its. (The write-ahead log beside it is logged, not
// checked: its size depends on when the background checkpoints ran; the
// soak benchmark measures both files on the wall's clock.)
func TestTheStoreFileStopsGrowingUnderASteadyLoad(t *testing.T) {
	is := is.New(t)
	open := func() (*sqlite.Store, string) {
		path := filepath.Join(t.TempDir(), "mcpflow.db")
		s, err := sqlite.Open(t.Context(), path, sqlite.WithSync(sqlite.SyncNormal),
			sqlite.WithStoreOptions(store.WithRetention(2*time.Second), store.WithMaxEvents(1000)))
		is.NoErr(err)
		t.Cleanup(func() { is.NoErr(s.Close()) })
		return s, path
	}
	var wal int64
	fileSize := func(path string) func() (int64, error) {
		return func() (int64, error) {
			db, err := os.Stat(path)
			if err != nil {
				return 0, err
			}
			if log, err := os.Stat(path + "-wal"); err == nil {
				wal = max(wal, log.Size())
			}
			return db.Size(), nil
		}
	}
	const ticks, warm = 300, 100 // 30 s, the first 10 s of them warming up
	s, path := open()
	pruned := storetest.SteadyLoad(t, s, ticks, true, fileSize(path))
	s, path = open()
	kept := storetest.SteadyLoad(t, s, ticks, false, fileSize(path))
	growth := slices.Max(pruned[warm:]) - slices.Max(pruned[:warm])
	baseline := kept[ticks-1] - kept[warm-1]
	t.Logf("database file after 10 s: %d bytes pruning, %d not; growth over the next 20 s: %d bytes pruning, %d not; write-ahead log at most %d bytes",
		slices.Max(pruned[:warm]), kept[warm-1], growth, baseline, wal)
	is.True(growth*20 < baseline) // the file stopped growing
}

// TestANewStoreIsInIncrementalVacuumMode checks the mode that lets
// ReclaimSpace give free pages back, on a new store and on one made
// without it, which Open converts once.
func TestANewStoreIsInIncrementalVacuumMode(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	mode := func(path string) int {
		db, err := sql.Open("sqlite", path)
		is.NoErr(err)
		defer db.Close()
		var mode int
		is.NoErr(db.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode))
		return mode
	}
	const incremental = 2
	path := filepath.Join(t.TempDir(), "new.db")
	s, err := sqlite.Open(ctx, path)
	is.NoErr(err)
	is.NoErr(s.Close())
	is.Equal(mode(path), incremental) // made so

	path = filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	is.NoErr(err)
	_, err = db.ExecContext(ctx, `CREATE TABLE before_incremental (x INTEGER)`)
	is.NoErr(err)
	is.NoErr(db.Close())
	is.Equal(mode(path), 0) // made without it
	s, err = sqlite.Open(ctx, path)
	is.NoErr(err)
	is.NoErr(s.Close())
	is.Equal(mode(path), incremental) // converted at open
}
