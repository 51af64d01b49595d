package authoring_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/authoring"
)

func TestEmptyHasTheContractAndNoSteps(t *testing.T) {
	is := is.New(t)
	is.Equal(jsonOf(t, emptyDraft(t)), `{"input_schema":{"properties":{},"type":"object"},"name":"flow","outcomes":["ok"],"output":[],`+
		`"output_schema":{"properties":{},"type":"object"},"routes":{},"start":"",`+
		`"state_schema":{"properties":{},"type":"object"},"steps":{}}`)
	for _, c := range []struct {
		name string
		p    authoring.EmptyParams
		kind authoring.Kind
	}{
		{"no name", authoring.EmptyParams{}, authoring.Malformed},
		{"a schema that is not JSON Schema", authoring.EmptyParams{Name: "flow",
			ContractParams: authoring.ContractParams{StateSchema: workflow.Object{"type": 7}}}, authoring.Invalid},
		{"outcomes equal once trimmed", authoring.EmptyParams{Name: "flow",
			ContractParams: authoring.ContractParams{Outcomes: []string{"ok", " ok"}}}, authoring.Invalid},
		{"no outcome", authoring.EmptyParams{Name: "flow", ContractParams: authoring.ContractParams{Outcomes: []string{}}}, authoring.Invalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := authoring.Empty(c.p)
			is.New(t).Equal(kindOf(err), c.kind)
		})
	}
}

func TestSetContractReplacesWhatIsGivenWhole(t *testing.T) {
	is := is.New(t)
	state := workflow.Object{"type": "object", "properties": workflow.Object{"n": workflow.Object{"type": "integer"}}}
	doc, err := unchanged(t, withFetch(t), func(doc workflow.Object) (workflow.Object, error) {
		return authoring.SetContract(doc, authoring.ContractParams{StateSchema: state, Outcomes: []string{"ok", "failed"}}, find)
	})
	is.NoErr(err)
	is.Equal(jsonOf(t, doc["state_schema"]), jsonOf(t, state))
	is.Equal(jsonOf(t, doc["outcomes"]), `["ok","failed"]`)
	is.Equal(jsonOf(t, doc["input_schema"]), `{"properties":{},"type":"object"}`) // not given, kept
	is.Equal(kindOf(authoring.ContractParams{}.Check()), authoring.Invalid)       // nothing given
}

func TestRemovalsDropWhatTheyNameAndNothingElse(t *testing.T) {
	is := is.New(t)
	doc, err := authoring.Bind(withFetch(t), authoring.BindParams{StepID: "get", SourcePath: "input.address", TargetPath: "local.url"}, find)
	is.NoErr(err)
	doc, err = authoring.Bind(doc, authoring.BindParams{StepID: "get", SourcePath: "local.body", TargetPath: "state.page"}, find)
	is.NoErr(err)

	removed, err := unchanged(t, doc, func(doc workflow.Object) (workflow.Object, error) {
		return authoring.RemoveBinding(doc, authoring.RemoveBindingParams{StepID: "get", Inputs: []string{"url"}, Outputs: []string{"nope"}}, find)
	})
	is.NoErr(err)
	is.Equal(jsonOf(t, at(removed, "steps", "get", "input")), `[]`)
	is.Equal(jsonOf(t, at(removed, "steps", "get", "output")), `[{"source":"body","target":"state.page"}]`) // not named, kept

	removed, err = authoring.RemoveRoute(doc, authoring.RemoveRouteParams{StepID: "get", Outcome: "error"}, find)
	is.NoErr(err)
	is.Equal(at(removed, "routes", "get"), map[string]any{"ok": workflow.End})

	doc["routes"] = map[string]any{"get": map[string]any{"ok": workflow.End}, "before": map[string]any{"ok": "get"}}
	removed, err = authoring.RemoveStep(doc, authoring.RemoveStepParams{StepID: "get"}, find)
	is.NoErr(err)
	is.Equal(at(removed, "steps"), map[string]any{})
	is.Equal(jsonOf(t, removed["routes"]), `{"before":{"ok":"get"}}`) // the route into it dangles

	is.Equal(kindOf(authoring.RemoveBindingParams{StepID: "get"}.Check()), authoring.Invalid) // nothing named
}

func TestSetNameStartRouteAndReplaceCheckNothing(t *testing.T) {
	is := is.New(t)
	doc, err := authoring.SetName(emptyDraft(t), authoring.SetNameParams{Name: "other"}, find)
	is.NoErr(err)
	doc, err = authoring.SetStart(doc, authoring.SetStartParams{StepID: "later"}, find)
	is.NoErr(err)
	doc, err = authoring.SetRoute(doc, authoring.SetRouteParams{StepID: "later", Outcome: "ok", Target: "nowhere"}, find)
	is.NoErr(err)
	is.Equal(doc["name"], "other")
	is.Equal(doc["start"], "later")
	is.Equal(at(doc, "routes", "later", "ok"), "nowhere")
	replaced, err := authoring.ReplaceDocument(doc, authoring.ReplaceDocumentParams{Draft: workflow.Object{"name": "x"}}, find)
	is.NoErr(err)
	is.Equal(replaced, workflow.Object{"name": "x"})
}
