package records

import (
	"context"
	"fmt"
	"slices"

	"github.com/mcpflow/mcpflow/actors/store"
)

// SavedDeployment is what saving a deployment came to.
type SavedDeployment struct {
	Deployment store.Deployment
	// Written says whether the store was asked to save, whatever came of
	// it.
	Written bool
	// Rebound says the save changed the bindings of a deployment that
	// had deployment-scoped sessions: those were opened for the old
	// bindings, and the next run must open fresh ones.
	Rebound bool
}

// SaveDeployment saves a deployment document (ParseDeployment) once the
// artifact version it deploys exists, replacing the deployment under its
// id. A limits.max_steps above stepCeiling (the server's
// server.limits.max_steps) is malformed. An unknown artifact version, or
// a failed save, is a *StoreError.
func SaveDeployment(ctx context.Context, st store.Store, doc map[string]any, stepCeiling int) (SavedDeployment, error) {
	d, err := ParseDeployment(doc)
	if err != nil {
		return SavedDeployment{}, err
	}
	if l := d.Limits; l != nil && l.MaxSteps != nil && *l.MaxSteps > stepCeiling {
		return SavedDeployment{}, malformed("deployment limits: max_steps %d is above this server's ceiling of %d steps (server.limits.max_steps); ask for at most %d, or raise server.limits.max_steps in the server's config",
			*l.MaxSteps, stepCeiling, stepCeiling)
	}
	if _, err := st.GetArtifact(ctx, d.ArtifactID, d.ArtifactVersion); err != nil {
		return SavedDeployment{}, &StoreError{What: fmt.Sprintf("artifact %q version %d", d.ArtifactID, d.ArtifactVersion), Err: err}
	}
	old, oldErr := st.GetDeployment(ctx, d.ID)
	saved := SavedDeployment{Deployment: d, Written: true}
	if err := st.SaveDeployment(ctx, d); err != nil {
		return saved, &StoreError{What: fmt.Sprintf("deployment %q", d.ID), Err: err}
	}
	saved.Rebound = oldErr == nil && !slices.Equal(old.Bindings, d.Bindings) &&
		slices.ContainsFunc(old.Bindings, func(b store.Binding) bool { return b.Session == store.SessionDeployment })
	return saved, nil
}
