package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mcpflow/mcpflow/actors/store"
)

// snapshot is a read-only transaction whose queries all read one snapshot
// of the database.
var snapshot = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}

// querier is what a pool, a connection and a transaction share.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// beginner starts transactions: a pool or a connection.
type beginner interface {
	BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error)
}

// inTx runs fn in a transaction on db and commits if fn succeeds.
func inTx(ctx context.Context, db beginner, opts pgx.TxOptions, fn func(pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, db, opts, fn)
}

// update runs fn in a read-write transaction (READ COMMITTED: each
// statement sees what committed before it began, and an UPDATE of a row
// another transaction changed waits for it and re-checks its WHERE on the
// row as committed).
func (s *Store) update(ctx context.Context, fn func(pgx.Tx) error) error {
	return inTx(ctx, s.pool, pgx.TxOptions{}, fn)
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
func getOne[T any](ctx context.Context, q querier, query string, args ...any) (T, error) {
	var v T
	var record []byte
	err := q.QueryRow(ctx, query, args...).Scan(&record)
	if errors.Is(err, pgx.ErrNoRows) {
		return v, store.ErrNotFound
	}
	if err != nil {
		return v, err
	}
	return store.Decoded[T](record, valuesOf(ctx, q))
}

// getAll decodes the JSON records in the one column that query selects;
// none is an empty slice. It reads them all before it unpacks the packed
// ones with the values q reads.
func getAll[T any](ctx context.Context, q querier, query string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	records, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, err
	}
	list := make([]T, len(records))
	for i, record := range records {
		if list[i], err = store.Decoded[T](record, valuesOf(ctx, q)); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// insertNew runs an INSERT ... ON CONFLICT DO NOTHING; no row inserted is
// store.ErrExists.
func insertNew(ctx context.Context, q querier, query string, args ...any) error {
	tag, err := q.Exec(ctx, query, args...)
	if err == nil && tag.RowsAffected() == 0 {
		err = store.ErrExists
	}
	return err
}

// upsert stores v's JSON as the record under key; query is the table's
// INSERT ... ON CONFLICT DO UPDATE with the key and the record as $1 and
// $2.
func upsert(ctx context.Context, q querier, query, key string, v any) error {
	record, err := encode(v)
	if err != nil {
		return err
	}
	_, err = q.Exec(ctx, query, key, record)
	return err
}

// deleteOne runs a DELETE and reports whether it removed a row.
func (s *Store) deleteOne(ctx context.Context, query string, args ...any) (bool, error) {
	tag, err := s.pool.Exec(ctx, query, args...)
	return tag.RowsAffected() > 0, err
}

// pageQuery selects one page of the JSON records of a table.
type pageQuery struct {
	table   string
	where   []string // conditions, joined by AND, with placeholders $1, $2, ...
	args    []any    // the arguments of where, in order
	orderBy string
	// page, when set, is the query of a page of records that pass the
	// conditions where, ordered, before its LIMIT and OFFSET; else the
	// page is selected from table, by orderBy.
	page func(where []string) string
}

// filter adds a condition; it writes its one argument as %s, which becomes
// its placeholder.
func (q *pageQuery) filter(condition string, arg any) {
	q.args = append(q.args, arg)
	q.where = append(q.where, fmt.Sprintf(condition, "$"+strconv.Itoa(len(q.args))))
}

// listPage returns the page [offset, offset+limit) of q's records (limit <= 0
// for no limit) and the count of all records that pass its filter, both
// from one snapshot.
func listPage[T any](ctx context.Context, db beginner, q pageQuery, offset, limit int) (page []T, total int, err error) {
	filter := ""
	if len(q.where) > 0 {
		filter = " WHERE " + strings.Join(q.where, " AND ")
	}
	n := len(q.args)
	selectPage := fmt.Sprintf("SELECT record FROM %s%s ORDER BY %s", q.table, filter, q.orderBy)
	if q.page != nil {
		selectPage = q.page(q.where)
	}
	selectPage += fmt.Sprintf(" LIMIT $%d OFFSET $%d", n+1, n+2)
	err = inTx(ctx, db, snapshot, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM "+q.table+filter, q.args...).Scan(&total); err != nil {
			return err
		}
		page, err = getAll[T](ctx, tx, selectPage, slices.Concat(q.args, []any{limitArg(limit), max(offset, 0)})...)
		return err
	})
	return page, total, err
}

// limitArg is a LIMIT argument: limit, or NULL (no limit) when it is <= 0.
func limitArg(limit int) *int {
	if limit <= 0 {
		return nil
	}
	return &limit
}
