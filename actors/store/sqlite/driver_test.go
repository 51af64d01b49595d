package sqlite_test

import (
	"database/sql"
	"database/sql/driver"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/actors/store/sqlite/sqlitetest"
	"github.com/mcpflow/mcpflow/actors/store/storetest"
)

// countedDriver is modernc's driver under another name, counting the
// connections it opens.
type countedDriver struct {
	driver.Driver
	opened *atomic.Int64
}

func (d countedDriver) Open(name string) (driver.Conn, error) {
	d.opened.Add(1)
	return d.Driver.Open(name)
}

// countedDriverName is the name countedDriver is registered under;
// countedOpens counts its connections.
const countedDriverName = "mcpflow-test-counted"

var countedOpens atomic.Int64

func init() {
	db, err := sql.Open("sqlite", "")
	if err != nil {
		panic(err)
	}
	sql.Register(countedDriverName, countedDriver{Driver: db.Driver(), opened: &countedOpens})
}

func TestAStoreOpensItsDatabaseThroughTheDriverItIsGiven(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	before := countedOpens.Load()
	s := sqlitetest.Open(t, sqlite.WithDriver(countedDriverName))
	is.NoErr(storetest.RunLifecycle(ctx, s, "run-1")) // a run that stays running: its steps in the journal
	runs, total, err := s.ListRuns(ctx, store.RunQuery{Limit: 10})
	is.NoErr(err) // list the runs: the running ones ordered through mcpflow_time_key
	is.Equal(total, 1)
	is.Equal(runs[0].ID, "run-1")
	is.True(countedOpens.Load()-before >= 3) // the writer, a reader and the checkpointer
}

func TestAStoreDoesNotOpenThroughADriverThatIsNotRegistered(t *testing.T) {
	is := is.New(t)
	_, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "mcpflow.db"), sqlite.WithDriver("mcpflow-no-such-driver"))
	is.True(err != nil) // no such driver
}

func TestTheStoresFunctionsKeepNull(t *testing.T) {
	is := is.New(t)
	fns := sqlite.Functions()
	is.Equal(len(fns), 2) // mcpflow_fold and mcpflow_time_key
	for _, f := range fns {
		v, err := f.Call(nil)
		is.NoErr(err)
		is.Equal(v, nil) // NULL stays NULL
		_, err = f.Call(int64(1))
		is.True(err != nil) // a number is refused
	}
	v, err := fns[0].Call("ÉCOLE")
	is.NoErr(err)
	is.Equal(v, "école") // folded in Go, beyond ASCII
}
