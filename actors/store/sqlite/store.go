// Package sqlite implements store.Store on an embedded SQLite database
// (modernc.org/sqlite: pure Go, no cgo). Each record is kept as a JSON
// column beside the indexed columns its queries need; the schema is migrated
// at Open; writes are durable once acknowledged (WAL, synchronous=FULL).
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/mcpflow/mcpflow/actors/store"
)

// Store is a store.Store on one SQLite database file. It is safe for
// concurrent use.
//
// It holds two connection pools on the file. SQLite admits one writer at a
// time: writers on several connections would contend for the lock, and
// a transaction that starts reading and then writes fails with SQLITE_BUSY
// outright rather than waiting. So every write goes through write, a pool
// of exactly one connection whose transactions begin IMMEDIATE: writers
// queue in Go for that connection instead of failing in SQLite. Reads go
// through read, several read-only connections that WAL lets run alongside
// the writer, each on a consistent snapshot.
type Store struct {
	write     *sql.DB
	read      *sql.DB
	maxEvents int // see store.Options
}

var _ store.Store = (*Store)(nil)

// Open opens the database at path, creating the file (mode 0600) and its
// directory (mode 0700) when missing, and migrates its schema to the
// current version. Every record is kept in that one file, auth records
// with their secret payloads included.
func Open(ctx context.Context, path string, opts ...store.Option) (*Store, error) {
	o := store.NewOptions(opts...)
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open store %q: %w", path, err)
	}
	s, err := open(ctx, path, o)
	if err != nil {
		return nil, fmt.Errorf("open store %q: %w", path, err)
	}
	return s, nil
}

// open does the work of Open on an absolute path.
func open(ctx context.Context, path string, o store.Options) (*Store, error) {
	if err := createFile(path); err != nil {
		return nil, err
	}
	write, err := openWriter(ctx, path)
	if err != nil {
		return nil, err
	}
	if err := migrate(ctx, write); err != nil {
		return nil, errors.Join(err, write.Close())
	}
	read, err := openReader(ctx, path)
	if err != nil {
		return nil, errors.Join(err, write.Close())
	}
	return &Store{write: write, read: read, maxEvents: o.MaxEvents}, nil
}

// Close closes the database.
func (s *Store) Close() error {
	return errors.Join(s.read.Close(), s.write.Close())
}
