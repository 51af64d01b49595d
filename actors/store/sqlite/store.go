// Package sqlite implements store.Store on an embedded SQLite database
// (modernc.org/sqlite: pure Go, no cgo). Each record is kept as a JSON
// column (a run's, its trace entries' and its events' packed:
// store.Values.Pack, store.EncodeRunEvent) beside the indexed columns its
// queries need, and a running run's steps in its journal (journal.go);
// the schema is migrated
// at Open; a write is acknowledged only once committed, at the sync level
// Open was given (WAL, synchronous=FULL by default).
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
)

// Store is a store.Store on one SQLite database file. It is safe for
// concurrent use.
//
// It holds two connection pools on the file. Reads go through read,
// several read-only connections that WAL lets run beside the writer, each
// on a consistent snapshot. Writes go through write, a pool of exactly one
// connection, which the writer goroutine holds from Open to Close
// (writeConn): SQLite admits one writer at a time, and writers on several
// connections would contend for its lock.
//
// Group commit. Each write (one store method call, one atomic unit) is
// queued to the writer, which the Store starts in Open and stops in Close.
// The writer takes the first queued write, opens a transaction (BEGIN
// IMMEDIATE) and runs it; it then takes the writes queued meanwhile,
// each in its own savepoint, until the queue is empty, the
// batch holds 64 writes or 5 ms have passed since it began
// (defaultBatchLimits). It commits once (one sync of the write-ahead log
// at sync full) and only then reports to each write its outcome. It never
// waits for more writes: those that queue while a batch commits form the
// next one. So concurrent writes share commits, and no write is
// acknowledged before its commit is durable at the store's sync level. A
// write that fails (store.ErrConflict, store.ErrExists, a constraint)
// rolls back to its savepoint, or the first with the whole transaction,
// and reports its own error; the others commit. A failure of the transaction itself
// (its commit, or an error after which SQLite rolled it back) fails every
// write of the batch, none of which is then committed.
//
// The queue holds queueSize writes; callers beyond that wait, each until
// its ctx ends. A write whose caller's ctx ends before the writer takes it
// is dropped and never runs. A taken write runs with the writer's ctx, not
// the caller's, because interrupting a statement would roll back the
// whole batch: it is committed or failed as a whole, and its caller waits
// for that outcome, which the batch bounds keep short. Close stops the
// queue (later writes fail with ErrClosed), lets the writer commit the
// writes already queued, and then closes the database.
//
// The write-ahead log is checkpointed into the database file in the
// background, on a connection of its own (see checkpointer), never by a
// commit.
//
// Every fixed query is prepared once, at Open, on the pool that runs it
// (see readQuery and writeQuery).
type Store struct {
	driver     string // the database/sql driver's name (WithDriver)
	write      *sql.DB
	writeConn  *sql.Conn   // write's one connection, the writer's
	writeStmts []*sql.Stmt // by writeQuery, prepared on writeConn
	read       *sql.DB
	reads      reader
	writer     *writer
	checkpoint *checkpointer // copies the write-ahead log into the file
	maxEvents  int           // see store.Options
	retention  time.Duration // see store.Options
	path       string        // the database file's, absolute
	sealer     store.Sealer  // seals auth payloads and registry secrets; nil keeps them as given
	space      *store.Space  // told whether each write found space; nil: nobody
	full       atomic.Bool   // the last write that succeeded or failed for space failed
	// secureDelete is the writer connection's secure_delete setting,
	// which reseal restores once it has zeroed what it freed.
	secureDelete int
}

var (
	_ store.Store    = (*Store)(nil)
	_ store.Resealer = (*Store)(nil)
)

// Open opens the database at path, creating the file (mode 0600) and its
// directory (mode 0700) when missing, migrates its schema to the current
// version and starts its writer. Every record is kept in that one file,
// auth records with their secret payloads and registry entries with
// their secret transport values included: sealed, when opts give a
// sealer (store.WithSealer), and then every record and entry kept in
// clear or under an older key is sealed under the current key before
// Open returns; one that does not open (its key is missing or wrong)
// fails Open and changes nothing. An Open that fails for lack of disk
// space wraps store.ErrFull: OpenReadOnly may then still open it.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	o := newOptions(opts...)
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open store %q: %w", path, err)
	}
	s, err := open(ctx, path, o)
	if err != nil {
		return nil, fmt.Errorf("open store %q: %w", path, classify(filepath.Dir(path), err))
	}
	return s, nil
}

// open does the work of Open on an absolute path.
func open(ctx context.Context, path string, o options) (_ *Store, err error) {
	synchronous, err := o.sync.pragma()
	if err != nil {
		return nil, err
	}
	if err := createFile(path); err != nil {
		return nil, err
	}
	s := &Store{driver: o.driver, maxEvents: o.store.MaxEvents, retention: o.store.Retention, path: path, sealer: o.store.Sealer, space: o.store.Space}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.closeDatabase())
		}
	}()
	if s.write, err = openWriter(ctx, s.driver, path, synchronous, o.checkpointPages); err != nil {
		return nil, err
	}
	if err := migrate(ctx, s.write, s.retention); err != nil {
		return nil, err
	}
	if err := incrementalVacuum(ctx, s.write, path); err != nil {
		return nil, err
	}
	if s.writeConn, err = s.write.Conn(ctx); err != nil {
		return nil, err
	}
	if s.writeStmts, err = prepareAll(ctx, s.writeConn, writeQueries); err != nil {
		return nil, err
	}
	if s.sealer != nil {
		if err := s.sealAtOpen(ctx); err != nil {
			return nil, err
		}
	}
	if s.read, err = openReader(ctx, s.driver, path); err != nil {
		return nil, err
	}
	if s.reads.stmts, err = prepareAll(ctx, s.read, readQueries); err != nil {
		return nil, err
	}
	s.writer = startWriter(s.writeStmts, o.batch)
	if o.checkpointPages == 0 {
		return s, nil // a test's: the log only grows
	}
	if s.checkpoint, err = startCheckpointer(ctx, s.driver, path, s.writer.commits.Load); err != nil {
		s.writer.close()
		return nil, err
	}
	return s, nil
}

// Close commits the writes already queued, stops the writer and closes
// the database. Writes made after it fail with ErrClosed.
func (s *Store) Close() error {
	if s.writer != nil { // nil when opened read-only
		s.writer.close()
	}
	return errors.Join(s.checkpoint.close(), s.closeDatabase())
}

// closeDatabase closes the statements, connection and pools that are
// open.
func (s *Store) closeDatabase() error {
	errs := []error{closeAll(s.reads.stmts), closeAll(s.writeStmts)}
	if s.writeConn != nil {
		errs = append(errs, s.writeConn.Close())
	}
	for _, db := range []*sql.DB{s.read, s.write} {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	return errors.Join(errs...)
}

// update runs fn as one write through the writer (see Store). A write
// that fails for lack of disk space wraps store.ErrFull, and s.space is
// told how each write went.
func (s *Store) update(ctx context.Context, fn writeFn) error {
	if s.writer == nil {
		return errReadOnly
	}
	err := s.writer.do(ctx, fn)
	if err != nil || s.full.Load() { // a write that succeeds on a disk with room takes no other step
		err = s.observe(err)
	}
	return err
}
