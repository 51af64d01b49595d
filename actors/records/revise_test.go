package records

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// TestARevisionCommitsOnceAndAStaleOneConflicts: an edit at the stored
// revision commits the next one with its checked status; the same edit
// again is stale and changes nothing; an edit with nothing to do answers
// the workspace at its revision.
func TestARevisionCommitsOnceAndAStaleOneConflicts(t *testing.T) {
	is := is.New(t)
	ctx := bounded(t)
	st := store.NewMemory()
	created, conflicted, err := CreateWorkspace(ctx, st, store.Workspace{ID: "w", Revision: 1, Draft: workflow.Object{}})
	is.NoErr(err)
	is.True(!conflicted)
	_, conflicted, err = CreateWorkspace(ctx, st, store.Workspace{ID: "w", Revision: 1})
	is.NoErr(err)
	is.True(conflicted) // the id is taken: the one there answers
	named := Revision{ID: "w", Revision: 1, Now: time.UnixMilli(5),
		Next:  func(doc workflow.Object) (workflow.Object, error) { return workflow.Object{"name": "n"}, nil },
		Check: func(workflow.Object) ([]workflow.Diagnostic, string) { return nil, "valid" }}
	r, err := Revise(ctx, st, named)
	is.NoErr(err)
	is.True(!r.Conflict)
	is.Equal(r.Workspace.Revision, created.Revision+1)
	is.Equal(r.Workspace.Status, "valid")
	is.Equal(r.Workspace.UpdatedAtMs, int64(5))
	r, err = Revise(ctx, st, named)
	is.NoErr(err)
	is.True(r.Conflict) // revision 1 is stale now
	is.Equal(r.Workspace.Revision, 2)
	unchanged := named
	unchanged.Revision, unchanged.Next = 2, func(workflow.Object) (workflow.Object, error) { return nil, nil }
	r, err = Revise(ctx, st, unchanged)
	is.NoErr(err)
	is.True(!r.Conflict)
	is.Equal(r.Workspace.Revision, 2) // nothing to do: no new revision
}
