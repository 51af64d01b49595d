package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
)

// readOnly starts a read transaction: one snapshot for all its queries.
var readOnly = &sql.TxOptions{ReadOnly: true}

// inTx runs fn in a transaction on db and commits if fn succeeds: for
// migrations and reads; writes go through the writer (Store.update).
func inTx(ctx context.Context, db *sql.DB, opts *sql.TxOptions, fn func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer tx.Rollback() // a no-op once committed
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// wrap prefixes a non-nil *errp with what failed; deferred, it gives every
// error a method returns the same context.
func wrap(errp *error, format string, args ...any) {
	if *errp != nil {
		*errp = fmt.Errorf(format+": %w", append(args, *errp)...)
	}
}

// encode returns v as JSON text.
func encode(v any) (string, error) {
	b, err := store.Marshal(v)
	return string(b), err
}

// getOne decodes the JSON record that query selects; no row is
// store.ErrNotFound. A packed record (store.Packed) is unpacked with the
// values q reads.
func getOne[T any, Q readQuery | writeQuery](ctx context.Context, q querier[Q], query Q, args ...any) (T, error) {
	var v T
	var record []byte
	err := q.row(ctx, query, args...).Scan(&record)
	if errors.Is(err, sql.ErrNoRows) {
		return v, store.ErrNotFound
	}
	if err != nil {
		return v, err
	}
	return store.Decoded[T](record, valuesOf(ctx, q))
}

// getAll decodes the JSON records in the one column that query selects.
func getAll[T any, Q readQuery | writeQuery](ctx context.Context, q querier[Q], query Q, args ...any) ([]T, error) {
	return decodeAll[T](valuesOf(ctx, q))(q.rows(ctx, query, args...))
}

// decodeAll returns the decoder of the JSON records in the one column of
// rows, which reads them all (scanAll) and then decodes each, unpacking a
// packed one with values.
func decodeAll[T any](values store.ValueLookup) func(*sql.Rows, error) ([]T, error) {
	return func(rows *sql.Rows, err error) ([]T, error) {
		records, err := scanAll(rows, err)
		if err != nil {
			return nil, err
		}
		return decodeRecords[T](records, values)
	}
}

// decodeRecords decodes each of records, with values.
func decodeRecords[T any](records [][]byte, values store.ValueLookup) ([]T, error) {
	list := make([]T, len(records))
	for i, record := range records {
		var err error
		if list[i], err = store.Decoded[T](record, values); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// scanFirst reads the first column of rows, whatever follows it, and
// closes them.
func scanFirst(rows *sql.Rows, err error) ([][]byte, error) {
	if err != nil {
		return nil, err
	}
	cols, err := rows.Columns()
	if err != nil {
		return nil, errors.Join(err, rows.Close())
	}
	var (
		records [][]byte
		rest    = make([]sql.RawBytes, len(cols))
		dest    = make([]any, len(cols))
	)
	for i := range rest {
		dest[i] = &rest[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, errors.Join(err, rows.Close())
		}
		records = append(records, slices.Clone(rest[0]))
	}
	return records, errors.Join(rows.Err(), rows.Close())
}

// scanAll reads the one column of rows and closes them.
func scanAll(rows *sql.Rows, err error) ([][]byte, error) {
	if err != nil {
		return nil, err
	}
	var records [][]byte
	for rows.Next() {
		var record []byte
		if err := rows.Scan(&record); err != nil {
			rows.Close()
			return nil, err
		}
		records = append(records, record)
	}
	return records, errors.Join(rows.Err(), rows.Close())
}

// rowsAffected returns how many rows the statement that gave res changed.
func rowsAffected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// insertNew runs an INSERT ... ON CONFLICT DO NOTHING; no row inserted is
// store.ErrExists.
func insertNew(ctx context.Context, tx writeTx, query writeQuery, args ...any) error {
	n, err := rowsAffected(tx.exec(ctx, query, args...))
	if err == nil && n == 0 {
		err = store.ErrExists
	}
	return err
}

// upsert stores v's JSON as the record under key; query is the table's
// INSERT ... ON CONFLICT DO UPDATE with the key and the record as arguments.
func (s *Store) upsert(ctx context.Context, query writeQuery, key string, v any) error {
	record, err := encode(v)
	if err != nil {
		return err
	}
	return s.update(ctx, func(ctx context.Context, tx writeTx) error {
		_, err := tx.exec(ctx, query, key, record)
		return err
	})
}

// deleteOne runs a DELETE and reports whether it removed a row.
func (s *Store) deleteOne(ctx context.Context, query writeQuery, args ...any) (deleted bool, err error) {
	err = s.update(ctx, func(ctx context.Context, tx writeTx) error {
		n, err := rowsAffected(tx.exec(ctx, query, args...))
		deleted = n > 0
		return err
	})
	return deleted, err
}

// pageQuery selects one page of the JSON records of a table.
type pageQuery struct {
	table   string
	where   []string // conditions, joined by AND
	args    []any    // named arguments of where
	orderBy string
	// page, when set, is the query of a page of records that pass the
	// conditions where, ordered, before its LIMIT and OFFSET, whose first
	// column is the record; else the page is selected from table, by
	// orderBy.
	page func(where []string) string
}

// listPage returns the page [offset, offset+limit) of q's records (limit <= 0
// for no limit) and the count of all records that pass its filter, both
// from one snapshot. Its queries depend on the filter and are not
// prepared: listing is not on a run's path.
func listPage[T any](ctx context.Context, db *sql.DB, reads reader, q pageQuery, offset, limit int) (page []T, total int, err error) {
	filter := ""
	if len(q.where) > 0 {
		filter = " WHERE " + strings.Join(q.where, " AND ")
	}
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	err = inTx(ctx, db, readOnly, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+q.table+filter, q.args...).Scan(&total)
		if err != nil {
			return err
		}
		query, scan := "SELECT record FROM "+q.table+filter+" ORDER BY "+q.orderBy, scanAll
		if q.page != nil {
			query, scan = q.page(q.where), scanFirst
		}
		records, err := scan(tx.QueryContext(ctx, query+" LIMIT @limit OFFSET @offset",
			slices.Concat(q.args, []any{sql.Named("limit", limit), sql.Named("offset", max(offset, 0))})...))
		if err != nil {
			return err
		}
		page, err = decodeRecords[T](records, valuesOf(ctx, reads.in(tx)))
		return err
	})
	return page, total, err
}

// timeKey formats t as fixed-width UTC text with nanoseconds, so that
// comparing two keys as text compares their times.
func timeKey(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000000Z")
}
