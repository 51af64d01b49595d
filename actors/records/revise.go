package records

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// Revision is one revision-checked edit of a draft workspace.
type Revision struct {
	ID       string
	Revision int // the revision the edit was made against
	Now      time.Time
	// Next computes the new document from the stored one (an empty object
	// when it has none) without changing it; nil answers the workspace as
	// it is, an error refuses the edit, which then changes nothing.
	Next func(doc workflow.Object) (workflow.Object, error)
	// Check answers the diagnostics and status of a new document.
	Check func(doc workflow.Object) ([]workflow.Diagnostic, string)
}

// Revised is what a revision-checked edit came to: the workspace as it is
// now, which is the one in the way when Conflict (nothing changed).
type Revised struct {
	Workspace store.Workspace
	Conflict  bool
}

// Revise runs one revision-checked edit: a stale revision is a conflict
// and changes nothing; otherwise the new revision commits with a
// compare-and-set on the one read (Commit), so that a writer that
// committed in between turns the edit into a conflict too. The revision
// goes up by one even when the result is invalid (an author may
// forward-reference steps). Next's error is returned as it is; a store
// failure is a *StoreError.
func Revise(ctx context.Context, st store.Store, r Revision) (Revised, error) {
	ws, err := st.GetWorkspace(ctx, r.ID)
	if err != nil {
		return Revised{}, &StoreError{What: fmt.Sprintf("draft workspace %q", r.ID), Err: err}
	}
	if ws.Revision != r.Revision {
		return Revised{Workspace: ws, Conflict: true}, nil
	}
	current := ws.Draft
	if current == nil {
		current = workflow.Object{}
	}
	doc, err := r.Next(current)
	switch {
	case err != nil:
		return Revised{}, err
	case doc == nil:
		return Revised{Workspace: ws}, nil
	}
	following := ws
	following.Revision, following.Draft, following.UpdatedAtMs = r.Revision+1, doc, r.Now.UnixMilli()
	following.Diagnostics, following.Status = r.Check(doc)
	return Commit(ctx, st, following, r.Revision)
}

// Commit stores ws if the stored revision is still expected. When another
// writer committed first, it is a conflict with the workspace as it is
// now. A store failure is a *StoreError.
func Commit(ctx context.Context, st store.Store, ws store.Workspace, expected int) (Revised, error) {
	what := fmt.Sprintf("draft workspace %q", ws.ID)
	switch err := st.UpdateWorkspace(ctx, ws, expected); {
	case errors.Is(err, store.ErrConflict):
		current, getErr := st.GetWorkspace(ctx, ws.ID)
		if getErr != nil {
			return Revised{}, &StoreError{What: what, Err: getErr}
		}
		return Revised{Workspace: current, Conflict: true}, nil
	case err != nil:
		return Revised{}, &StoreError{What: what, Err: err}
	}
	return Revised{Workspace: ws}, nil
}
