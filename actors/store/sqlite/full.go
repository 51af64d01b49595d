package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"syscall"

	"modernc.org/sqlite"

	"github.com/mcpflow/mcpflow/actors/store"
)

// SQLite's primary result codes that a full disk gives: SQLITE_FULL from
// a write, and SQLITE_IOERR from what SQLite cannot grow (its -shm file
// at open, say), which is a full disk only when the disk has no room.
const (
	codeIOErr = 10
	codeFull  = 13
)

// lowSpace is the free space under which an I/O error of SQLite's is taken
// for a full disk: SQLite needs its -shm file (32 KiB) and a few pages of
// write-ahead log to write at all.
const lowSpace = 1 << 20

// classify wraps err with store.ErrFull when it is the disk's lack of
// space: SQLITE_FULL, or an I/O error while the disk of dir has less than
// lowSpace free.
func classify(dir string, err error) error {
	if err == nil || errors.Is(err, store.ErrFull) {
		return err
	}
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return err
	}
	switch e.Code() & 0xff {
	case codeFull:
	case codeIOErr:
		if free, ok := freeSpace(dir); !ok || free >= lowSpace {
			return err
		}
	default:
		return err
	}
	return fmt.Errorf("%w: %w", store.ErrFull, err)
}

// observe classifies a write's error (classify), records whether the
// disk is full and tells s.space; it returns the classified error.
func (s *Store) observe(err error) error {
	err = classify(filepath.Dir(s.path), err)
	switch {
	case errors.Is(err, store.ErrFull):
		s.full.Store(true)
	case err == nil:
		s.full.Store(false)
	}
	return s.space.Observe(err)
}

// freeSpace is how many bytes of dir's file system an unprivileged
// writer may still take.
func freeSpace(dir string) (uint64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return st.Bavail * uint64(st.Bsize), true
}

// errReadOnly is the error of every write to a store opened read-only.
var errReadOnly = fmt.Errorf("%w: the store was opened read-only, as its disk was full at start; free space and restart mcpflow to write", store.ErrFull)

// OpenReadOnly opens the database at path for reading only, as Open
// cannot when its disk is full (SQLite cannot make its -shm file): on one
// connection that holds the database in exclusive locking mode, so that
// SQLite keeps the write-ahead log's index in memory and writes no file.
// The schema must be the current one. Every write fails with an error
// wrapping store.ErrFull, and the store's Space (store.WithSpace) is
// marked full. The caller must be the database's only user (the store
// lock).
func OpenReadOnly(ctx context.Context, path string, opts ...Option) (*Store, error) {
	o := newOptions(opts...)
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open store %q read-only: %w", path, err)
	}
	s := &Store{driver: o.driver, maxEvents: o.store.MaxEvents, retention: o.store.Retention, path: path, sealer: o.store.Sealer, space: o.store.Space}
	if err := s.openReadOnly(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("open store %q read-only: %w", path, err), s.closeDatabase())
	}
	s.space.MarkFull()
	return s, nil
}

// openReadOnly opens s's one reading connection and prepares its reads.
func (s *Store) openReadOnly(ctx context.Context) (err error) {
	s.read, err = sql.Open(s.driver, dsn(s.path, url.Values{
		"_pragma": {fmt.Sprintf("busy_timeout(%d)", busyTimeoutMs), "locking_mode(EXCLUSIVE)", "query_only(ON)"},
	}))
	if err != nil {
		return err
	}
	s.read.SetMaxOpenConns(1) // the lock is the connection's
	s.read.SetMaxIdleConns(1)
	s.read.SetConnMaxLifetime(0)
	var version int
	if err := s.read.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if version != len(migrations) {
		return fmt.Errorf("schema version %d is not this build's (%d), and a store opened read-only is not migrated", version, len(migrations))
	}
	s.reads.stmts, err = prepareAll(ctx, s.read, readQueries)
	return err
}
