package engines

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
)

// ModerncDriver is the database/sql driver name of modernc.org/sqlite,
// which mcpflow's store uses.
const ModerncDriver = "sqlite"

// SQLiteJournal is the SQLite store's run journal alone, without the
// store: a table of rows keyed by run << 32 | seq, as run_journal is,
// each holding what a PebbleJournal's row holds (the same encoding), on
// one connection in WAL mode, a transaction per append. It measures the
// engine and database/sql, where the store's step commit adds its writer
// (a queue and a goroutine), its head cache and its run's columns.
type SQLiteJournal struct {
	db     *sql.DB
	conn   *sql.Conn
	insert *sql.Stmt
}

// OpenSQLiteJournal opens (or creates) a journal in the database at
// path, through the driver named driverName (ModerncDriver or
// CgoDriver), with PRAGMA synchronous at level.
func OpenSQLiteJournal(ctx context.Context, driverName, path string, level sqlite.Sync) (_ *SQLiteJournal, err error) {
	params := url.Values{
		"_pragma": {"busy_timeout(5000)", "journal_mode(WAL)", "synchronous(" + strings.ToUpper(string(level)) + ")"},
		"_txlock": {"immediate"},
	}
	db, err := sql.Open(driverName, (&url.URL{Scheme: "file", Path: path, RawQuery: params.Encode()}).String())
	if err != nil {
		return nil, fmt.Errorf("open sqlite journal %s: %w", path, err)
	}
	j := &SQLiteJournal{db: db}
	defer func() {
		if err != nil {
			err = errors.Join(fmt.Errorf("open sqlite journal %s: %w", path, err), j.Close())
		}
	}()
	db.SetMaxOpenConns(1)
	if j.conn, err = db.Conn(ctx); err != nil {
		return nil, err
	}
	for _, ddl := range []string{
		`CREATE TABLE IF NOT EXISTS run_journal (key INTEGER PRIMARY KEY, row TEXT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS run_values (run INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (run, key)) WITHOUT ROWID`,
	} {
		if _, err := j.conn.ExecContext(ctx, ddl); err != nil {
			return nil, err
		}
	}
	if j.insert, err = j.conn.PrepareContext(ctx, `INSERT INTO run_journal (key, row) VALUES (?, ?)`); err != nil {
		return nil, err
	}
	return j, nil
}

// Close closes the journal's statement, connection and pool.
func (j *SQLiteJournal) Close() error {
	var errs []error
	if j.insert != nil {
		errs = append(errs, j.insert.Close())
	}
	if j.conn != nil {
		errs = append(errs, j.conn.Close())
	}
	if err := errors.Join(append(errs, j.db.Close())...); err != nil {
		return fmt.Errorf("close sqlite journal: %w", err)
	}
	return nil
}

// Append appends c, a step commit of a running run, as row seq of the
// journal of run (an integer, as the store's run rowid), in one
// transaction.
func (j *SQLiteJournal) Append(ctx context.Context, c store.Commit, run int64, seq uint32) error {
	values := store.Values{}
	row, err := journalRow(c, values)
	if err != nil {
		return fmt.Errorf("encode journal row %d of run %s: %w", seq, c.Run.ID, err)
	}
	tx, err := j.conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("append journal row %d of run %s: %w", seq, c.Run.ID, err)
	}
	if err := j.insertRow(ctx, tx, run<<32|int64(seq), row, run, values); err != nil {
		return errors.Join(fmt.Errorf("append journal row %d of run %s: %w", seq, c.Run.ID, err), tx.Rollback())
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("append journal row %d of run %s: %w", seq, c.Run.ID, err)
	}
	return nil
}

// insertRow inserts, in tx, the journal row row under key and the large
// values of run it refers to.
func (j *SQLiteJournal) insertRow(ctx context.Context, tx *sql.Tx, key int64, row string, run int64, values store.Values) error {
	if _, err := tx.StmtContext(ctx, j.insert).ExecContext(ctx, key, row); err != nil {
		return err
	}
	for k, v := range values {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO run_values (run, key, value) VALUES (?, ?, ?)`, run, k, v); err != nil {
			return err
		}
	}
	return nil
}

// Rows returns the rows of run's journal, in order.
func (j *SQLiteJournal) Rows(ctx context.Context, run int64) ([]string, error) {
	rows, err := j.conn.QueryContext(ctx, `SELECT row FROM run_journal WHERE key BETWEEN ? AND ? ORDER BY key`, run<<32, run<<32|0xffffffff)
	if err != nil {
		return nil, fmt.Errorf("read the journal of run %d: %w", run, err)
	}
	var list []string
	for rows.Next() {
		var row string
		if err := rows.Scan(&row); err != nil {
			return nil, errors.Join(fmt.Errorf("read the journal of run %d: %w", run, err), rows.Close())
		}
		list = append(list, row)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("read the journal of run %d: %w", run, err)
	}
	return list, nil
}
