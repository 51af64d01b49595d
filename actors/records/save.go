package records

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/store"
)

// Save stores a. Artifacts are immutable: when its id and version exist,
// the save is idempotent if the two differ only in when the catalog was
// observed (ObservedAtEpochMs), which is the same content saved again,
// and refused otherwise.
func Save(ctx context.Context, st store.Store, a store.Artifact) error {
	_, err := st.SaveArtifact(ctx, a)
	if errors.Is(err, store.ErrConflict) {
		if saved, getErr := st.GetArtifact(ctx, a.ID, a.Version); getErr == nil && len(saved.RequiredCapabilities) == len(a.RequiredCapabilities) {
			again := a
			again.RequiredCapabilities = append([]store.RequiredCapability(nil), a.RequiredCapabilities...)
			for i := range again.RequiredCapabilities {
				again.RequiredCapabilities[i].ObservedAtEpochMs = saved.RequiredCapabilities[i].ObservedAtEpochMs
			}
			_, err = st.SaveArtifact(ctx, again)
		}
	}
	switch {
	case errors.Is(err, store.ErrConflict):
		return refused("artifact %q version %d already exists with different content; artifacts are immutable, save a new version", a.ID, a.Version)
	case err != nil:
		return &StoreError{What: fmt.Sprintf("artifact %q version %d", a.ID, a.Version), Err: err}
	}
	return nil
}
