package records

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/store"
)

// CreateWorkspace stores ws, a new workspace at revision 1. When its id
// is taken it changes nothing and answers the workspace stored under it,
// conflicted. A store failure is a *StoreError.
func CreateWorkspace(ctx context.Context, st store.Store, ws store.Workspace) (existing store.Workspace, conflicted bool, err error) {
	what := fmt.Sprintf("draft workspace %q", ws.ID)
	switch err := st.CreateWorkspace(ctx, ws); {
	case errors.Is(err, store.ErrExists):
		existing, getErr := st.GetWorkspace(ctx, ws.ID)
		if getErr != nil {
			return store.Workspace{}, false, &StoreError{What: what, Err: getErr}
		}
		return existing, true, nil
	case err != nil:
		return store.Workspace{}, false, &StoreError{What: what, Err: err}
	}
	return ws, false, nil
}
