package authoring_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/authoring"
)

// Advise names the remedy that takes a draft further: a valid one is
// saved (its outcomes, ["ok"] by default), one with no steps gets one,
// and otherwise the first error's code picks the remedy, its message
// leads the reason, and an example is made where the finding allows.
func TestAdviseNamesTheRemedyOfADraftsFirstError(t *testing.T) {
	steps := map[string]any{"b": map[string]any{}, "a": map[string]any{}}
	withSteps := workflow.Object{"name": "w", "steps": steps}
	for _, tc := range []struct {
		name  string
		doc   workflow.Object
		valid bool
		first authoring.Finding
		want  authoring.Advice
	}{
		{"valid, default outcomes", withSteps, true, authoring.Finding{}, authoring.Advice{Remedy: authoring.RemedySave,
			Reason: "The draft is valid: save it as an artifact, or keep editing.", Example: &authoring.Example{
				Description: "Save the draft as version 1 of an artifact.",
				Params:      map[string]any{"artifact_id": "w", "version": 1, "title": "w", "outcomes": []any{workflow.OutcomeOK}}}}},
		{"valid, declared outcomes", workflow.Object{"name": "w", "outcomes": []any{"done"}}, true, authoring.Finding{}, authoring.Advice{
			Remedy: authoring.RemedySave, Reason: "The draft is valid: save it as an artifact, or keep editing.", Example: &authoring.Example{
				Description: "Save the draft as version 1 of an artifact.",
				Params:      map[string]any{"artifact_id": "w", "version": 1, "title": "w", "outcomes": []any{"done"}}}}},
		{"no steps", workflow.Object{}, false, authoring.Finding{Code: "unknown_start", Message: "m"}, authoring.Advice{Remedy: authoring.RemedyAddStep,
			Reason: "The draft has no steps yet: add one; the first step added becomes the start."}},
		{"unknown start", withSteps, false, authoring.Finding{Code: "unknown_start", Message: "no start"}, authoring.Advice{
			Remedy: authoring.RemedySetStart, Reason: "no start. Set the start to the step the workflow begins with.",
			Example: &authoring.Example{Description: "Start at the first step.", Params: map[string]any{"step_id": "a"}}}},
		{"missing outcome edge", withSteps, false, authoring.Finding{Code: "missing_outcome_edge", Message: `outcome "error" has no route`, StepID: "a"},
			authoring.Advice{Remedy: authoring.RemedyBranch, Reason: `outcome "error" has no route. Route the outcome with branch (or handle, for several at once).`,
				Example: &authoring.Example{Description: "Finish the workflow on that outcome.",
					Params: map[string]any{"step_id": "a", "routes": map[string]any{"error": workflow.End}}}}},
		{"missing outcome edge, no step", withSteps, false, authoring.Finding{Code: "missing_outcome_edge", Message: `outcome "error" has no route`},
			authoring.Advice{Remedy: authoring.RemedyBranch, Reason: `outcome "error" has no route. Route the outcome with branch (or handle, for several at once).`}},
		{"unknown edge destination", withSteps, false, authoring.Finding{Code: "unknown_edge_destination", Message: "m"}, authoring.Advice{
			Remedy: authoring.RemedyAddStep, Reason: "m. Add the step the route names, or re-route it with branch."}},
		{"invalid field", withSteps, false, authoring.Finding{Code: "invalid_node_input_field", Message: "m"}, authoring.Advice{
			Remedy: authoring.RemedyBind, Reason: "m. bind declares the field it wires by projecting the capability's schema."}},
		{"unknown node def", withSteps, false, authoring.Finding{Code: "unknown_node_def", Message: "m"}, authoring.Advice{
			Remedy: authoring.RemedyFindCapability, Reason: "m. Find an available capability and use it instead."}},
		{"anything else", withSteps, false, authoring.Finding{Code: "other", Message: "m"}, authoring.Advice{
			Remedy: authoring.RemedyPatch, Reason: "m. Fix the draft where the diagnostic points."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is.New(t).Equal(authoring.Advise(tc.doc, tc.valid, tc.first), tc.want)
		})
	}
}
