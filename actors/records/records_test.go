package records

import (
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// TestSavingAnArtifactAgainIsIdempotentOnlyForTheSameContent: a version
// saved again that differs only in when its catalog was observed is the
// same content; any other difference is refused, not malformed.
func TestSavingAnArtifactAgainIsIdempotentOnlyForTheSameContent(t *testing.T) {
	is := is.New(t)
	ctx := bounded(t)
	st := store.NewMemory()
	observed := func(ms int64) store.Artifact {
		return store.Artifact{ID: "a", Version: 1, Title: "A", Kind: KindWorkflow, Outcomes: []string{"ok"},
			RequiredCapabilities: []store.RequiredCapability{{Ref: store.CapabilityRef{Source: "s", CapabilityKey: "t"}, Kind: KindNodeSpec, ObservedAtEpochMs: &ms}},
			WorkflowDependencies: map[string]int{}}
	}
	is.NoErr(Save(ctx, st, observed(1)))
	is.NoErr(Save(ctx, st, observed(2))) // observed later: the same content
	other := observed(1)
	other.Title = "B"
	err := Save(ctx, st, other)
	var refusal *Error
	is.True(errors.As(err, &refusal)) // different content is refused
	is.True(!refusal.Malformed)       // as a value, not as params
	is.Equal(refusal.Message, `artifact "a" version 1 already exists with different content; artifacts are immutable, save a new version`)
}

// TestOutcomesMustCoverThePlansEnds: a blank outcome is malformed, a
// route to the end without "ok" declared is refused.
func TestOutcomesMustCoverThePlansEnds(t *testing.T) {
	is := is.New(t)
	var refusal *Error
	is.True(errors.As(CheckOutcomes(workflow.Plan{}, []string{"ok", " "}), &refusal))
	is.True(refusal.Malformed) // a blank outcome is the params' fault
	plan := workflow.Plan{Edges: []workflow.Edge{{From: "call", To: workflow.End}}}
	is.True(errors.As(CheckOutcomes(plan, []string{"done"}), &refusal))
	is.True(!refusal.Malformed) // an undeclared ending is the plan's
	is.Equal(refusal.Message, `step "call" finishes the workflow with outcome "ok", which outcomes does not declare`)
	is.NoErr(CheckOutcomes(plan, []string{"ok"}))
}

// TestADeploymentBindsEachConnectionWithOneSession: two logical sources
// bound to one connection must ask for the same session scope.
func TestADeploymentBindsEachConnectionWithOneSession(t *testing.T) {
	is := is.New(t)
	_, err := ParseDeployment(map[string]any{"id": "d", "artifact_id": "a", "artifact_version": 1, "bindings": []any{
		map[string]any{"logical_source": "x", "concrete_source": "c", "session": "run"},
		map[string]any{"logical_source": "y", "concrete_source": "c"},
	}})
	var refusal *Error
	is.True(errors.As(err, &refusal))
	is.True(refusal.Malformed)
	is.Equal(refusal.Message, `connection "c" is bound with session "run" and "shared"; the bindings of one connection must ask for the same session`)
	d, err := ParseDeployment(map[string]any{"deployment_id": "d", "artifact_id": "a", "artifact_version": 1, "bindings": map[string]any{"x": "c"}})
	is.NoErr(err)
	is.Equal(d.ID, "d")
	is.Equal(d.DriftPolicy, "block") // the default
	is.Equal(d.Bindings, []store.Binding{{LogicalSource: "x", ConcreteSource: "c"}})
}

// A logical source is suggested bound to the enabled connection of the
// same id; one with none is left for the client to bind.
func TestSuggestedBindingsBindLogicalSourcesToEnabledConnectionsOfTheirName(t *testing.T) {
	is := is.New(t)
	enabled := func(id string) bool { return id == "kv" }
	is.Equal(SuggestedBindings([]string{"kv", "mail"}, enabled), map[string]string{"kv": "kv"})
	is.Equal(SuggestedBindings(nil, enabled), map[string]string{}) // never nil: {} on the wire
}

// TestSaveDeploymentNeedsItsArtifactAndSaysWhenItRebindsScopedSessions:
// a deployment of an unknown artifact version is not found and writes
// nothing; a save is Rebound only when it changes the bindings of a saved
// deployment that had deployment-scoped sessions.
func TestSaveDeploymentNeedsItsArtifactAndSaysWhenItRebindsScopedSessions(t *testing.T) {
	is := is.New(t)
	ctx := bounded(t)
	st := store.NewMemory()
	doc := func(concrete, session string) map[string]any {
		return map[string]any{"id": "d", "artifact_id": "a", "artifact_version": 1, "bindings": []any{
			map[string]any{"logical_source": "x", "concrete_source": concrete, "session": session}}}
	}
	saved, err := SaveDeployment(ctx, st, doc("c", store.SessionDeployment), 100_000)
	is.True(errors.Is(err, store.ErrNotFound)) // no artifact a@1
	is.True(!saved.Written)
	is.NoErr(Save(ctx, st, artifactA))

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
			saved, err := SaveDeployment(ctx, st, doc(step.concrete, step.session), 100_000)
			is.NoErr(err)
			is.True(saved.Written)
			is.Equal(saved.Rebound, step.rebound)
			is.Equal(saved.Deployment.Bindings[0].ConcreteSource, step.concrete)
		})
	}
}

// TestADeploymentAskingForMoreStepsThanTheCeilingIsRefusedNamingIt: a
// limits.max_steps above the server's ceiling is malformed, its message
// naming the ceiling and the config key that sets it, and nothing is
// written; the ceiling itself is accepted.
func TestADeploymentAskingForMoreStepsThanTheCeilingIsRefusedNamingIt(t *testing.T) {
	is := is.New(t)
	ctx := bounded(t)
	st := store.NewMemory()
	is.NoErr(Save(ctx, st, artifactA))
	doc := func(steps int) map[string]any {
		return map[string]any{"id": "d", "artifact_id": "a", "artifact_version": 1, "limits": map[string]any{"max_steps": steps}}
	}
	saved, err := SaveDeployment(ctx, st, doc(1_000_000_000), 100_000)
	var refusal *Error
	is.True(errors.As(err, &refusal))
	is.True(refusal.Malformed) // the params ask for too much
	is.Equal(refusal.Message, "deployment limits: max_steps 1000000000 is above this server's ceiling of 100000 steps (server.limits.max_steps); ask for at most 100000, or raise server.limits.max_steps in the server's config")
	is.True(!saved.Written)
	_, err = st.GetDeployment(ctx, "d")
	is.True(errors.Is(err, store.ErrNotFound)) // nothing saved

	saved, err = SaveDeployment(ctx, st, doc(100_000), 100_000)
	is.NoErr(err) // the ceiling itself is allowed
	is.True(saved.Written)
}
