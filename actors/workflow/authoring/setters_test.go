package authoring_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/authoring"
)

// bindings decodes a JSON list of bindings.
func bindings[B any](t *testing.T, data string) []B {
	t.Helper()
	var out []B
	is.New(t).NoErr(json.Unmarshal([]byte(data), &out))
	return out
}

func TestSetStepInputBindingsChecksThemAgainstTheCapability(t *testing.T) {
	for _, c := range []struct {
		name, bindings string
		kind           authoring.Kind
		message        string
	}{
		{name: "a literal that fits and a path", bindings: `[{"target":"url","value":"https://x"},{"target":"retries","path":"input.n"}]`},
		{name: "a target the capability does not declare", bindings: `[{"target":"nope","value":1}]`, kind: authoring.Invalid,
			message: `input binding 0: target "nope" is not declared by capability "up.fetch"`},
		{name: "a literal that does not fit", bindings: `[{"target":"url","value":7}]`, kind: authoring.Invalid},
		{name: "overlapping targets", bindings: `[{"target":"url","value":"a"},{"target":"url","value":"b"}]`, kind: authoring.Invalid,
			message: `input binding 1: target "url" overlaps the target "url" of input binding 0`},
		{name: "two sources", bindings: `[{"target":"url","value":"a","path":"input.u"}]`, kind: authoring.Malformed},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			p := authoring.SetStepInputBindingsParams{StepID: "get", Bindings: bindings[workflow.InputBinding](t, c.bindings)}
			doc, err := unchanged(t, withFetch(t), func(doc workflow.Object) (workflow.Object, error) {
				return authoring.SetStepInputBindings(doc, p, find)
			})
			is.Equal(kindOf(err), c.kind)
			if c.message != "" {
				is.Equal(err.Error(), c.message)
			}
			if c.kind == 0 {
				is.NoErr(err)
				is.Equal(at(doc, "input_schema", "properties", "n"), map[string]any{"type": "integer"}) // projected from retries
			}
		})
	}
}

func TestSetStepOutputBindingsDeclaresTheirStateTargets(t *testing.T) {
	is := is.New(t)
	doc, err := authoring.SetStepOutputBindings(withFetch(t), authoring.SetStepOutputBindingsParams{StepID: "get",
		Bindings: bindings[workflow.OutputBinding](t, `[{"source":"status","target":"state.code"}]`)}, find)
	is.NoErr(err)
	is.Equal(at(doc, "state_schema", "properties", "code"), map[string]any{"type": "integer"})
	_, err = authoring.SetStepOutputBindings(withFetch(t), authoring.SetStepOutputBindingsParams{StepID: "get",
		Bindings: bindings[workflow.OutputBinding](t, `[{"source":"nope","target":"state.code"}]`)}, find)
	is.Equal(kindOf(err), authoring.Invalid)
}

func TestSetWorkflowOutputBindingsReadsDeclaredFieldsOnly(t *testing.T) {
	is := is.New(t)
	doc, err := authoring.SetStepOutputBindings(withFetch(t), authoring.SetStepOutputBindingsParams{StepID: "get",
		Bindings: bindings[workflow.OutputBinding](t, `[{"source":"status","target":"state.code"}]`)}, find)
	is.NoErr(err)
	out, err := authoring.SetWorkflowOutputBindings(doc, authoring.SetWorkflowOutputBindingsParams{
		Bindings: bindings[workflow.InputBinding](t, `[{"target":"status","path":"state.code"}]`)}, find)
	is.NoErr(err)
	is.Equal(at(out, "output_schema", "properties", "status"), map[string]any{"type": "integer"})
	for _, refused := range []string{
		`[{"target":"x","path":"context.run_id"}]`, // no frame holds context once the workflow ends
		`[{"target":"x","path":"state.undeclared"}]`,
		`[{"target":"undeclared","value":1}]`,
	} {
		_, err := authoring.SetWorkflowOutputBindings(doc, authoring.SetWorkflowOutputBindingsParams{Bindings: bindings[workflow.InputBinding](t, refused)}, find)
		is.Equal(kindOf(err), authoring.Invalid) // refused
	}
}

func TestStepMapsReplaceOrMergeAndRefuseWhatAMapCannotHold(t *testing.T) {
	is := is.New(t)
	doc, err := authoring.SetStepInputMap(withFetch(t), authoring.SetStepInputMapParams{StepID: "get", InputMap: map[string]string{"input.a": "url"}}, find)
	is.NoErr(err)
	doc, err = authoring.SetStepInputMap(doc, authoring.SetStepInputMapParams{StepID: "get", InputMap: map[string]string{"input.b": "retries"}, Merge: true}, find)
	is.NoErr(err)
	is.Equal(jsonOf(t, at(doc, "steps", "get", "input")), `[{"path":"input.a","target":"url"},{"path":"input.b","target":"retries"}]`)

	doc, err = authoring.SetStepInputBindings(doc, authoring.SetStepInputBindingsParams{StepID: "get", Bindings: bindings[workflow.InputBinding](t,
		`[{"target":"url","expression":{"kind":"literal","value":"x"}}]`)}, find)
	is.NoErr(err)
	_, err = authoring.SetStepInputMap(doc, authoring.SetStepInputMapParams{StepID: "get", InputMap: map[string]string{"input.b": "retries"}, Merge: true}, find)
	is.Equal(kindOf(err), authoring.Invalid)
	is.True(strings.HasSuffix(err.Error(), authoring.MapHint)) // says what to use instead

	doc, err = authoring.SetStepOutputMap(withFetch(t), authoring.SetStepOutputMapParams{StepID: "get", OutputMap: map[string]string{"body": "state.a"}}, find)
	is.NoErr(err)
	doc, err = authoring.SetStepOutputMap(doc, authoring.SetStepOutputMapParams{StepID: "get", OutputMap: map[string]string{"body": "state.b"}, Merge: true}, find)
	is.NoErr(err)
	is.Equal(jsonOf(t, at(doc, "steps", "get", "output")), `[{"source":"body","target":"state.b"}]`) // retargeted in place

	is.Equal(kindOf(authoring.SetWorkflowOutputMapParams{}.Check()), authoring.Malformed) // a map is required
}
