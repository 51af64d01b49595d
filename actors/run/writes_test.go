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

// A tool step's result of 64 KiB, which echo returns from the run's
// input, is in the trace entry (resolved input, output, state changes),
// the run's input, state and output, its checkpoint and its last event,
// and the record is committed twice: the store is handed it once. (A
// result of 1 MiB is the store's own test, actors/store; here the
// run's waits, bounded for small payloads, must hold under -race.)
func TestAToolStepsLargeResultIsWrittenToTheStoreOnce(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	db := sqlitetest.Open(t)
	w.runs = db
	plan := w.plan(t, "echo")
	message := strings.Repeat("x", 64<<10)

	before := db.BytesWritten()
	_, final := w.start(t, "run-big", plan, workflow.Object{"message": message})
	written := db.BytesWritten() - before
	t.Logf("a run of one step whose input and result are %d bytes wrote %d bytes", len(message), written)
	if final.Error != nil {
		t.Logf("the run failed: %s", *final.Error)
	}
	is.Equal(final.Status, store.RunCompleted)
	is.True(written < 3*64<<10/2) // the 64 KiB is written once: under 96 KiB in all

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

// A pure step costs its trace entry and a pointer to it (the
// step_finished event), under 256 bytes; each commit costs the run's
// record besides (here under 1 KiB), however the run actor slices its
// steps into commits.
func TestAThousandStepsOfAPureLoopWriteUnder256BytesEachBesidesTheirCommits(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	db := sqlitetest.Open(t)
	w.runs = db
	plan := w.compileDraft(t, `{"name":"spin","start":"d","steps":{
		"d":{"when":{"if":{"op":"exists","path":"input.stop"},"then":"__end__","otherwise":"d"}}}}`)

	before, commitsBefore := db.BytesWritten(), db.WriteStats().Writes
	_, final := w.startWith(t, "run-spin", plan, workflow.Object{}, workflow.Options{MaxSteps: 1000})
	written, commits := db.BytesWritten()-before, db.WriteStats().Writes-commitsBefore
	t.Logf("a pure loop of 1,000 steps wrote %d bytes in %d commits", written, commits)
	is.Equal(final.Status, store.RunFailed) // the step budget ends it
	is.Equal(final.TraceCount, 1000)
	is.True(written < 1000*256+commits*1024) // 256 bytes a step, 1 KiB a commit

	events, _, err := db.ReadRunEvents(wait(t), "run-spin", 0, 0)
	is.NoErr(err)
	is.Equal(len(events), 1002) // running, a step_finished a step, failed
	is.Equal(*events[500].Step.TraceIndex, 499)
	is.Equal(events[500].Step.NextNodeID, "d") // each built again from its entry
}
