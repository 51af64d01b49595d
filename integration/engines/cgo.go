package engines

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"

	"github.com/mattn/go-sqlite3"

	"github.com/mcpflow/mcpflow/actors/store/sqlite"
)

// CgoDriver is the database/sql driver name of mattn/go-sqlite3 (cgo)
// as the SQLite store opens it (sqlite.WithDriver): it takes the store's
// data source names and defines the store's SQL functions.
const CgoDriver = "mcpflow-engines-cgo-sqlite"

func init() {
	sql.Register(CgoDriver, cgoDriver{inner: &sqlite3.SQLiteDriver{ConnectHook: defineFunctions}})
}

// cgoDriver is mattn's driver taking the data source names of modernc's,
// which the store writes: a file: URI whose _pragma parameters are
// PRAGMAs to run on each new connection (as name(value)), and whose
// _txlock is the lock each transaction's BEGIN takes.
type cgoDriver struct {
	inner *sqlite3.SQLiteDriver
}

// Open implements driver.Driver.
func (d cgoDriver) Open(name string) (driver.Conn, error) {
	u, err := url.Parse(name)
	if err != nil {
		return nil, fmt.Errorf("parse data source name: %w", err)
	}
	if u.Scheme != "file" {
		return nil, fmt.Errorf("data source name %q is not a file: URI", name)
	}
	q := u.Query()
	params := url.Values{}
	if lock := q.Get("_txlock"); lock != "" {
		params.Set("_txlock", lock)
	}
	conn, err := d.inner.Open((&url.URL{Scheme: "file", Path: u.Path, RawQuery: params.Encode()}).String())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", u.Path, err)
	}
	c, ok := conn.(*sqlite3.SQLiteConn)
	if !ok {
		return nil, errors.Join(fmt.Errorf("mattn's driver opened a %T", conn), conn.Close())
	}
	// mattn's own settings (synchronous=NORMAL, busy_timeout=5000) come
	// first; the store's replace them.
	for _, pragma := range q["_pragma"] {
		if _, err := c.Exec("PRAGMA "+pragma, nil); err != nil {
			return nil, errors.Join(fmt.Errorf("PRAGMA %s: %w", pragma, err), c.Close())
		}
	}
	return c, nil
}

// defineFunctions defines the store's SQL functions on conn. mattn hands
// a function SQL NULL as a nil []byte, which they take as nil.
func defineFunctions(conn *sqlite3.SQLiteConn) error {
	for _, f := range sqlite.Functions() {
		call := f.Call
		fn := func(arg any) (any, error) {
			if b, ok := arg.([]byte); ok && b == nil {
				arg = nil
			}
			return call(arg)
		}
		if err := conn.RegisterFunc(f.Name, fn, true); err != nil {
			return fmt.Errorf("define SQL function %s: %w", f.Name, err)
		}
	}
	return nil
}
