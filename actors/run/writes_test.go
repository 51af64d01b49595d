package run_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/sqlite/sqlitetest"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// What a run writes to the store is counted in bytes handed to SQLite
// (sqlite.Store.BytesWritten): the records, trace entries, events and
// values of its commits.

func TestAOneMegabyteResultIsWrittenToTheStoreOnce(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	db := sqlitetest.Open(t)
	w.runs = db
	plan := w.plan(t, "echo")
	message := strings.Repeat("x", 1<<20)

	before := db.BytesWritten()
	_, final := w.start(t, "run-big", plan, workflow.Object{"message": message})
	written := db.BytesWritten() - before
	t.Logf("a run of one step whose input and result are %d bytes wrote %d bytes", len(message), written)
	is.Equal(final.Status, store.RunCompleted)
	is.True(written < 3<<19) // the 1 MiB is written once: under 1.5 MiB in all

	stored, err := db.GetRun(wait(t), "run-big")
	is.NoErr(err)
	is.Equal(stored.Output, workflow.Object{"message": message}) // the output reads back whole
	is.Equal(stored.Input, workflow.Object{"message": message})
	trace, err := db.ReadTrace(wait(t), "run-big", 0, 0)
	is.NoErr(err)
	is.Equal(len(trace), 1)
	is.Equal(trace[0].ResolvedInput, workflow.Object{"message": message}) // the trace reads back whole
	is.Equal(trace[0].Output, workflow.Object{"message": message})
}
