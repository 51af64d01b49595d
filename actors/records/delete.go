package records

import (
	"context"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/store"
)

// Delete deletes artifact id@version unless a deployment uses it: then it
// is kept, and blockers names the deployments that use it
// (DeploymentsUsing). written says whether the store was asked to delete,
// whatever came of it. An unknown version, or one gone by the time of the
// delete, is a *StoreError wrapping store.ErrNotFound.
func Delete(ctx context.Context, st store.Store, id string, version int) (blockers []string, written bool, err error) {
	what := fmt.Sprintf("artifact %q version %d", id, version)
	if _, err := st.GetArtifact(ctx, id, version); err != nil {
		return nil, false, &StoreError{What: what, Err: err}
	}
	if blockers, err = DeploymentsUsing(ctx, st, id, version); err != nil || len(blockers) > 0 {
		return blockers, false, err
	}
	deleted, err := st.DeleteArtifact(ctx, id, version)
	switch {
	case err != nil:
		return blockers, true, &StoreError{What: what, Err: err}
	case !deleted:
		return blockers, true, &StoreError{What: what, Err: store.ErrNotFound}
	}
	return blockers, true, nil
}
