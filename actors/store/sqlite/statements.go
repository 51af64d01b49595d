package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
)

// A readQuery or a writeQuery is one of the store's fixed SQL statements,
// declared at package level with newReadQuery or newWriteQuery. Open
// prepares every one once, where it runs (on the read pool, or on the
// writer's connection), so that SQLite parses it once per connection
// rather than at every call; Close closes them. The two types keep a
// write from being run on the read-only pool.
type (
	readQuery  int
	writeQuery int
)

// readQueries and writeQueries hold the text of each query, by its number.
// Package initialisation fills them; they are read-only after.
var readQueries, writeQueries []string

// newReadQuery declares a query that runs on the read pool.
func newReadQuery(text string) readQuery {
	readQueries = append(readQueries, text)
	return readQuery(len(readQueries) - 1)
}

// newWriteQuery declares a query that runs in the writer's transactions.
func newWriteQuery(text string) writeQuery {
	writeQueries = append(writeQueries, text)
	return writeQuery(len(writeQueries) - 1)
}

// preparer is what *sql.DB and *sql.Conn share to prepare statements.
type preparer interface {
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// prepareAll prepares each of texts on p; on failure it closes those
// already prepared.
func prepareAll(ctx context.Context, p preparer, texts []string) ([]*sql.Stmt, error) {
	stmts := make([]*sql.Stmt, 0, len(texts))
	for _, text := range texts {
		st, err := p.PrepareContext(ctx, text)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("prepare %q: %w", text, err), closeAll(stmts))
		}
		stmts = append(stmts, st)
	}
	return stmts, nil
}

// closeAll closes stmts.
func closeAll(stmts []*sql.Stmt) error {
	var errs []error
	for _, st := range stmts {
		errs = append(errs, st.Close())
	}
	return errors.Join(errs...)
}

// querier runs queries of type Q as the statements prepared for them:
// where they were prepared, or within tx when it is set. Within a
// transaction, tx.StmtContext reuses the statement already prepared on
// the transaction's connection.
type querier[Q readQuery | writeQuery] struct {
	stmts []*sql.Stmt // by query number
	tx    *sql.Tx     // nil: where the statements were prepared
	// written, when set, counts the bytes of the text and blob values
	// that exec binds (the writer's: see Store.BytesWritten).
	written *atomic.Uint64
}

type (
	// reader runs read queries, on the read pool or in a read
	// transaction.
	reader = querier[readQuery]
	// writeTx runs write queries on the writer's connection, within the
	// transaction the writer began there (see writer.batch).
	writeTx = querier[writeQuery]
)

// in returns q running within tx.
func (q querier[Q]) in(tx *sql.Tx) querier[Q] {
	q.tx = tx
	return q
}

// stmt is the statement of query, bound to q's transaction if any.
func (q querier[Q]) stmt(ctx context.Context, query Q) *sql.Stmt {
	st := q.stmts[query]
	if q.tx != nil {
		st = q.tx.StmtContext(ctx, st)
	}
	return st
}

// exec runs query and returns its result.
func (q querier[Q]) exec(ctx context.Context, query Q, args ...any) (sql.Result, error) {
	if q.written != nil {
		q.written.Add(valueBytes(args))
	}
	return q.stmt(ctx, query).ExecContext(ctx, args...)
}

// valueBytes is the length of the text and blob values among args.
func valueBytes(args []any) uint64 {
	var n int
	for _, a := range args {
		switch v := a.(type) {
		case string:
			n += len(v)
		case *string:
			if v != nil {
				n += len(*v)
			}
		case []byte:
			n += len(v)
		}
	}
	return uint64(n)
}

// rows runs query and returns the rows it selects.
func (q querier[Q]) rows(ctx context.Context, query Q, args ...any) (*sql.Rows, error) {
	return q.stmt(ctx, query).QueryContext(ctx, args...)
}

// row runs query, which selects at most one row.
func (q querier[Q]) row(ctx context.Context, query Q, args ...any) *sql.Row {
	return q.stmt(ctx, query).QueryRowContext(ctx, args...)
}
