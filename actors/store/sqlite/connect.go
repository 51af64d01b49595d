package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
)

// busyTimeoutMs is how long a connection waits for a lock held by another
// connection (a checkpoint, or another process) before SQLITE_BUSY.
const busyTimeoutMs = 5000

// writerCheckpointPages is the size of the write-ahead log, in pages, at
// which the commit that crosses it checkpoints (see checkpointer): 16 MiB
// at the default page size.
const writerCheckpointPages = 4_000

// walSizeLimit is the size, in bytes, that a checkpoint truncates the
// write-ahead log back to once it has grown past it.
const walSizeLimit = 64 << 20

// createFile makes the database's directory (0700) and an empty database
// file (0600) unless they exist, so that SQLite never creates them with
// looser permissions. SQLite gives its -wal and -shm files the database
// file's mode.
func createFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}

// openWriter opens the single-connection write pool through the driver
// named driverName and puts the database in WAL mode, with PRAGMA
// synchronous set to synchronous (see Sync); a commit checkpoints once
// the log holds checkpointPages (0: never).
func openWriter(ctx context.Context, driverName, path, synchronous string, checkpointPages int) (*sql.DB, error) {
	db, err := sql.Open(driverName, dsn(path, url.Values{
		"_pragma": {
			fmt.Sprintf("busy_timeout(%d)", busyTimeoutMs),
			// Before any table exists, so that a new database is made
			// with it (see incrementalVacuum).
			"auto_vacuum(INCREMENTAL)",
			"journal_mode(WAL)",
			// The checkpointer checkpoints; a commit only once the log
			// is four times SQLite's default (see checkpointer).
			fmt.Sprintf("wal_autocheckpoint(%d)", checkpointPages),
			// A checkpoint truncates a write-ahead log that grew past
			// this back to it, rather than keeping its largest size.
			fmt.Sprintf("journal_size_limit(%d)", walSizeLimit),
			"synchronous(" + synchronous + ")",
			"foreign_keys(ON)",
		},
		"_txlock": {"immediate"},
	}))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1) // see Store
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	if mode != "wal" {
		return nil, errors.Join(fmt.Errorf("journal mode is %q, not wal", mode), db.Close())
	}
	return db, nil
}

// openReader opens the pool of read-only connections through the driver
// named driverName.
func openReader(ctx context.Context, driverName, path string) (*sql.DB, error) {
	db, err := sql.Open(driverName, dsn(path, url.Values{
		"_pragma": {
			fmt.Sprintf("busy_timeout(%d)", busyTimeoutMs),
			"query_only(ON)",
		},
	}))
	if err != nil {
		return nil, err
	}
	conns := max(4, runtime.GOMAXPROCS(0))
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	if err := db.PingContext(ctx); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return db, nil
}

// dsn is a file: URI for path with the driver's connection parameters;
// the URI escapes any '?' or '#' in the path.
func dsn(path string, params url.Values) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: params.Encode()}
	return u.String()
}
