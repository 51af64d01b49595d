package storetest

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

func testWorkspaces(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()

	list, err := s.ListWorkspaces(ctx)
	is.NoErr(err)
	is.Equal(len(list), 0) // a new store is empty

	for _, id := range []string{"ws-b", "ws-a", "ws-c"} {
		is.NoErr(s.CreateWorkspace(ctx, workspace(id, 1)))
	}
	err = s.CreateWorkspace(ctx, workspace("ws-a", 7))
	is.True(errors.Is(err, store.ErrExists)) // id taken

	got, err := s.GetWorkspace(ctx, "ws-a")
	is.NoErr(err)
	is.Equal(got, workspace("ws-a", 1)) // the first create stands

	_, err = s.GetWorkspace(ctx, "ws-missing")
	is.True(errors.Is(err, store.ErrNotFound))
	is.True(strings.Contains(err.Error(), `"ws-missing"`)) // errors name the record

	list, err = s.ListWorkspaces(ctx)
	is.NoErr(err)
	is.Equal(list, []store.Workspace{workspace("ws-a", 1), workspace("ws-b", 1), workspace("ws-c", 1)})

	deleted, err := s.DeleteWorkspace(ctx, "ws-b")
	is.NoErr(err)
	is.True(deleted)
	deleted, err = s.DeleteWorkspace(ctx, "ws-b")
	is.NoErr(err)
	is.True(!deleted) // already gone
	_, err = s.GetWorkspace(ctx, "ws-b")
	is.True(errors.Is(err, store.ErrNotFound))
}

func testWorkspaceCompareAndSet(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	is.NoErr(s.CreateWorkspace(ctx, workspace("ws", 1)))

	next := workspace("ws", 2)
	next.Status = "valid"
	next.Diagnostics = []workflow.Diagnostic{}
	is.NoErr(s.UpdateWorkspace(ctx, next, 1))
	got, err := s.GetWorkspace(ctx, "ws")
	is.NoErr(err)
	is.Equal(got, next)

	stale := workspace("ws", 2)
	stale.Title = ptr("stale")
	err = s.UpdateWorkspace(ctx, stale, 1)
	is.True(errors.Is(err, store.ErrConflict)) // revision 1 is gone
	got, err = s.GetWorkspace(ctx, "ws")
	is.NoErr(err)
	is.Equal(got, next) // a lost compare-and-set changes nothing

	err = s.UpdateWorkspace(ctx, workspace("ws-missing", 2), 1)
	is.True(errors.Is(err, store.ErrNotFound))
}

// testWorkspaceConcurrentUpdates races writers on one revision, round after
// round: each round exactly one wins and the others see ErrConflict.
func testWorkspaceConcurrentUpdates(t *testing.T, s store.Store) {
	const writers, rounds = 50, 5
	is := is.New(t)
	ctx := t.Context()
	is.NoErr(s.CreateWorkspace(ctx, workspace("ws", 1)))

	for revision := 1; revision <= rounds; revision++ {
		errs := make([]error, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				w := workspace("ws", revision+1)
				w.Title = ptr(writerName(i))
				<-start
				errs[i] = s.UpdateWorkspace(ctx, w, revision)
			})
		}
		close(start)
		wg.Wait()

		winner, conflicts := -1, 0
		for i, err := range errs {
			switch {
			case err == nil:
				is.Equal(winner, -1) // a single writer wins
				winner = i
			case errors.Is(err, store.ErrConflict):
				conflicts++
			default:
				is.NoErr(err)
			}
		}
		is.True(winner >= 0)           // one writer wins
		is.Equal(conflicts, writers-1) // all the others conflict
		got, err := s.GetWorkspace(ctx, "ws")
		is.NoErr(err)
		is.Equal(got.Revision, revision+1)
		is.Equal(*got.Title, writerName(winner)) // the winner's write is stored
	}
}

func writerName(i int) string { return "writer " + strconv.Itoa(i) }
