package sqlite

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// TestACommitOfManyRowsTakesSeveralStatements: a commit appending more
// trace entries than one statement takes stores them all, in order.
func TestACommitOfManyRowsTakesSeveralStatements(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "mcpflow.db"))
	is.NoErr(err)
	defer s.Close()
	var entries []workflow.TraceEntry
	for i := range 2*maxRowsPerInsert + 3 {
		entries = append(entries, workflow.TraceEntry{FrameID: "root", NodeID: fmt.Sprintf("n%d", i), StepType: workflow.NodeCall})
	}
	is.NoErr(s.CreateRun(ctx, store.Run{ID: "r", Status: store.RunRunning, TraceCount: len(entries)}, entries))
	got, err := s.ReadTrace(ctx, "r", 0, 0)
	is.NoErr(err)
	is.Equal(len(got), len(entries)) // every entry stored
	for i, e := range got {
		is.Equal(e.NodeID, entries[i].NodeID) // in order
	}
	events, last, err := s.ReadRunEvents(ctx, "r", 0, 0)
	is.NoErr(err)
	is.Equal(int(last), len(entries)+1) // a status event, then one per entry
	is.Equal(len(events), len(entries)+1)
	for i, e := range events {
		is.Equal(e.Seq, int64(i+1)) // numbered from 1, no gap
	}
}
