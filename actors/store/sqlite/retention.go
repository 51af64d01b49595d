package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
)

// reclaimPages is how many free pages one ReclaimSpace gives back to the
// file system: 512 KiB at the default page size, a write of a millisecond
// or two.
const reclaimPages = 128

// The queries of retention.
var (
	selectExpired   = newWriteQuery(`SELECT id, trace_count FROM runs WHERE expires_at <= ? ORDER BY expires_at, id LIMIT ?`)
	deleteRun       = newWriteQuery(`DELETE FROM runs WHERE id = ?`) // its trace and events go with it (ON DELETE CASCADE)
	insertTombstone = newWriteQuery(`INSERT INTO run_tombstones (run_id, pruned_at) VALUES (?, ?)
		ON CONFLICT DO UPDATE SET pruned_at = excluded.pruned_at`)
	dropTombstones = newWriteQuery(`DELETE FROM run_tombstones WHERE run_id IN
		(SELECT run_id FROM run_tombstones WHERE pruned_at < ? ORDER BY pruned_at LIMIT ?)`)
	reclaim       = newWriteQuery(fmt.Sprintf(`PRAGMA incremental_vacuum(%d)`, reclaimPages))
	freePages     = newWriteQuery(`PRAGMA freelist_count`)
	readTombstone = newReadQuery(`SELECT EXISTS (SELECT 1 FROM run_tombstones WHERE run_id = ?)`)
)

// PruneRuns implements store.RunRetention in one write: it selects the
// expired runs in expiry order, then deletes each (its trace and its
// events with it) and leaves its tombstone, within limit.
func (s *Store) PruneRuns(ctx context.Context, now time.Time, limit store.PruneLimit) (pruned int, err error) {
	defer wrap(&err, "prune runs")
	prunedAt := timeKey(now)
	err = s.update(ctx, func(ctx context.Context, tx writeTx) error {
		pruned = 0
		ids, err := expired(ctx, tx, prunedAt, limit)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if _, err := tx.exec(ctx, deleteRun, id); err != nil {
				return err
			}
			s.writer.heads.forget(id)
			if _, err := tx.exec(ctx, insertTombstone, id, prunedAt); err != nil {
				return err
			}
		}
		pruned = len(ids)
		return nil
	})
	return pruned, err
}

// expired returns the ids of the runs that expired at or before now (a
// timeKey), soonest first, within limit.
func expired(ctx context.Context, tx writeTx, now string, limit store.PruneLimit) ([]string, error) {
	rows, err := tx.rows(ctx, selectExpired, now, limit.Runs)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return store.PruneIDs(rows, limit)
}

// DropTombstones implements store.RunRetention.
func (s *Store) DropTombstones(ctx context.Context, before time.Time, limit int) (dropped int, err error) {
	defer wrap(&err, "drop tombstones")
	err = s.update(ctx, func(ctx context.Context, tx writeTx) error {
		n, err := rowsAffected(tx.exec(ctx, dropTombstones, timeKey(before), limit))
		dropped = int(n)
		return err
	})
	return dropped, err
}

// ReclaimSpace implements store.RunRetention: one write runs an
// incremental vacuum of reclaimPages pages, which moves that many free
// pages to the end of the file and truncates them (once the write-ahead
// log is checkpointed), and reads how many are still free.
func (s *Store) ReclaimSpace(ctx context.Context) (more bool, err error) {
	defer wrap(&err, "reclaim free space")
	err = s.update(ctx, func(ctx context.Context, tx writeTx) error {
		if _, err := tx.exec(ctx, reclaim); err != nil {
			return err
		}
		var free int64
		if err := tx.row(ctx, freePages).Scan(&free); err != nil {
			return err
		}
		more = free > 0
		return nil
	})
	return more, err
}

// StoreSize implements store.RunRetention: the size of the database file
// and of its write-ahead log.
func (s *Store) StoreSize(context.Context) (int64, error) {
	var size int64
	for _, name := range []string{s.path, s.path + "-wal"} {
		info, err := os.Stat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("store size: %w", err)
		}
		size += info.Size()
	}
	return size, nil
}

// missing turns err, when it is store.ErrNotFound for run id, into
// store.ErrPruned if retention pruned that run (its tombstone is kept).
func (s *Store) missing(ctx context.Context, id string, err error) error {
	if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	var pruned bool
	if terr := s.reads.row(ctx, readTombstone, id).Scan(&pruned); terr != nil {
		return errors.Join(err, terr)
	}
	if pruned {
		return store.ErrPruned
	}
	return err
}

// incrementalVacuum makes sure that the database at path is in
// incremental auto-vacuum mode, where ReclaimSpace can give the pages
// that deletes free back to the file system. A database made by this
// version is created so (openWriter sets it before any table exists);
// one made before is converted once, by a VACUUM, which rewrites the
// whole file and needs as much free disk again. Should the VACUUM fail
// (the disk is full, say), the store is opened as it is: SQLite reuses
// the free pages for new records anyway, and the file stops growing; it
// only does not shrink. The conversion is tried again at the next open.
// It waits, too, while the run journal holds rows, whose keys are the
// rowids of their runs (see journal.go), which a VACUUM may renumber:
// the recovery that follows the open folds them.
func incrementalVacuum(ctx context.Context, db *sql.DB, path string) error {
	var mode int
	if err := db.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil {
		return fmt.Errorf("read auto_vacuum: %w", err)
	}
	const incremental = 2
	if mode == incremental {
		return nil
	}
	var journaled bool
	if err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM run_journal)`).Scan(&journaled); err != nil {
		return fmt.Errorf("look for a run journal: %w", err)
	}
	if journaled {
		slog.Info("the store is converted to incremental vacuum at the next open, once no run has a journal", "path", path)
		return nil
	}
	start := time.Now()
	slog.Info("converting the store to incremental vacuum, once: the whole file is rewritten", "path", path)
	if _, err := db.ExecContext(ctx, `PRAGMA auto_vacuum = INCREMENTAL`); err != nil {
		return fmt.Errorf("set auto_vacuum: %w", err)
	}
	if _, err := db.ExecContext(ctx, `VACUUM`); err != nil {
		slog.Warn("the store could not be converted to incremental vacuum: free pages are reused but not given back", "path", path, "err", err)
		return nil
	}
	slog.Info("the store is in incremental vacuum mode", "path", path, "took", time.Since(start).Round(time.Millisecond))
	return nil
}
