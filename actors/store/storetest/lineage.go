package storetest

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// testRunLineage: a fork keeps the run it forked and the step it forked
// from, in its record and in the list's rows, and its replayed trace
// entries say so.
func testRunLineage(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	r := run("run-fork", store.RunRunning, t0)
	r.ParentRunID, r.ForkedFromNode = "run-parent", "parse"
	replayed := entry("fetch", "parse")
	replayed.Replayed = true
	r.TraceCount = 1
	is.NoErr(s.CreateRun(ctx, r, []workflow.TraceEntry{replayed}))
	got, err := s.GetRun(ctx, r.ID)
	is.NoErr(err)
	is.Equal(got.ParentRunID, "run-parent")
	is.Equal(got.ForkedFromNode, "parse")
	rows, _, err := s.ListRuns(ctx, store.RunQuery{})
	is.NoErr(err)
	is.Equal(len(rows), 1)
	is.Equal(rows[0].ParentRunID, "run-parent")
	trace, err := s.ReadTrace(ctx, r.ID, 0, 0)
	is.NoErr(err)
	is.Equal(len(trace), 1)
	is.True(trace[0].Replayed)
}
