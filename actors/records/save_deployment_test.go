package records

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
)

// TestSaveDeploymentNeedsItsArtifactAndSaysWhenItRebindsScopedSessions:
// a deployment of an unknown artifact version is not found and writes
// nothing; a save is Rebound only when it changes the bindings of a saved
// deployment that had deployment-scoped sessions.
func TestSaveDeploymentNeedsItsArtifactAndSaysWhenItRebindsScopedSessions(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st := store.NewMemory()
	doc := func(concrete, session string) map[string]any {
		return map[string]any{"id": "d", "artifact_id": "a", "artifact_version": 1, "bindings": []any{
			map[string]any{"logical_source": "x", "concrete_source": concrete, "session": session}}}
	}
	saved, err := SaveDeployment(ctx, st, doc("c", store.SessionDeployment))
	is.True(errors.Is(err, store.ErrNotFound)) // no artifact a@1
	is.True(!saved.Written)
	is.NoErr(Save(ctx, st, store.Artifact{ID: "a", Version: 1, Title: "A", Kind: KindWorkflow, Outcomes: []string{"ok"}, WorkflowDependencies: map[string]int{}}))

	for _, step := range []struct {
		name              string
		concrete, session string
		rebound           bool
	}{
		{"first save", "c", store.SessionDeployment, false},               // nothing was bound before
		{"same bindings", "c", store.SessionDeployment, false},            // nothing changed
		{"rebound from deployment scope", "e", store.SessionShared, true}, // its sessions were for c
		{"rebound from shared", "c", store.SessionShared, false},          // no deployment-scoped session to release
	} {
		t.Run(step.name, func(t *testing.T) {
			is := is.New(t)
			saved, err := SaveDeployment(ctx, st, doc(step.concrete, step.session))
			is.NoErr(err)
			is.True(saved.Written)
			is.Equal(saved.Rebound, step.rebound)
			is.Equal(saved.Deployment.Bindings[0].ConcreteSource, step.concrete)
		})
	}
}
