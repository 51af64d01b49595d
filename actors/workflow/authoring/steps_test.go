package authoring_test

import (
	"encoding/json"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/authoring"
)

func TestAddStepFromCapabilityRoutesCoverExactlyTheDeclaredOutcomes(t *testing.T) {
	for _, c := range []struct {
		name       string
		capability string
		routes     map[string]string
		want       map[string]any // the step's routes; nil when refused
		refusal    string
	}{
		{name: "one declared outcome ends the workflow unrouted", capability: "up.ping",
			want: map[string]any{"ok": workflow.End}},
		{name: "several declared outcomes need routes", capability: "up.fetch",
			refusal: `capability "up.fetch" declares outcomes [ok, error]: give routes for each of them`},
		{name: "routes that cover them exactly", capability: "up.fetch", routes: map[string]string{"ok": "next", "error": workflow.End},
			want: map[string]any{"ok": "next", "error": workflow.End}},
		{name: "a missing outcome", capability: "up.fetch", routes: map[string]string{"ok": workflow.End},
			refusal: `capability "up.fetch" declares outcomes [ok, error]: routes must cover exactly those; missing [error], unknown []`},
		{name: "an unknown outcome", capability: "up.ping", routes: map[string]string{"ok": workflow.End, "timeout": workflow.End},
			refusal: `capability "up.ping" declares outcomes [ok]: routes must cover exactly those; missing [], unknown [timeout]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			doc, err := unchanged(t, emptyDraft(t), func(doc workflow.Object) (workflow.Object, error) {
				return authoring.AddStepFromCapability(doc, authoring.AddStepFromCapabilityParams{
					StepID: "s", CapabilityName: c.capability, Routes: c.routes}, find)
			})
			if c.refusal != "" {
				is.Equal(kindOf(err), authoring.Invalid)
				is.Equal(err.Error(), c.refusal)
				return
			}
			is.NoErr(err)
			is.Equal(at(doc, "routes", "s"), c.want)
			is.Equal(doc["start"], "s") // the first step is the start
		})
	}
}

func TestAddStepFromCapabilityWiresInputsOutputsAndARouteIn(t *testing.T) {
	is := is.New(t)
	from, outcome := "get", "error"
	doc, err := authoring.AddStepFromCapability(withFetch(t), authoring.AddStepFromCapabilityParams{
		StepID: "again", CapabilityName: "up.fetch", RouteFromStep: &from, RouteFromOutcome: &outcome,
		Routes:   map[string]string{"ok": workflow.End, "error": workflow.End},
		InputMap: map[string]string{"state.next": "url"}, BindOutputs: map[string]string{"body": "state.page"},
	}, find)
	is.NoErr(err)
	is.Equal(at(doc, "routes", "get", "error"), "again") // the route in
	is.Equal(doc["start"], "get")                        // the start stays
	is.Equal(jsonOf(t, at(doc, "steps", "again")),
		`{"input":[{"path":"state.next","target":"url"}],"output":[{"source":"body","target":"state.page"}],"use":"up.fetch"}`)
	is.Equal(at(doc, "state_schema", "properties", "next"), map[string]any{"type": "string"}) // from fetch's input schema
	is.Equal(at(doc, "state_schema", "properties", "page"), map[string]any{"type": "string"}) // from its output schema
}

func TestAddStepRefusesRoutesOnOutcomesTheStepDoesNotDeclare(t *testing.T) {
	for _, c := range []struct {
		name, step string
		routes     map[string]string
		incoming   *authoring.RouteSource
		kind       authoring.Kind
		refusal    string
	}{
		{name: "an outcome its capability does not declare", step: `{"use":"up.fetch"}`, routes: map[string]string{"done": workflow.End},
			kind: authoring.Invalid, refusal: `unknown route outcome "done" for draft step "s" (it declares ok, error)`},
		{name: "a step that names its own targets", step: `{"end":{}}`, routes: map[string]string{"ok": workflow.End},
			kind: authoring.Invalid, refusal: `routes are not allowed for the end step "s": it names its own targets`},
		{name: "a route in from an outcome the source does not declare", step: `{"use":"up.ping"}`,
			incoming: &authoring.RouteSource{StepID: "get", Outcome: "done"},
			kind:     authoring.Invalid, refusal: `unknown incoming route outcome "done" for source step "get" (it declares ok, error)`},
		{name: "a route in from no step", step: `{"use":"up.ping"}`, incoming: &authoring.RouteSource{StepID: "nowhere"},
			kind: authoring.Invalid, refusal: `unknown incoming source step "nowhere"`},
		{name: "a step that does not parse", step: `{"use":"up.ping","bogus":1}`, kind: authoring.Malformed},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			_, err := unchanged(t, withFetch(t), func(doc workflow.Object) (workflow.Object, error) {
				return authoring.AddStep(doc, authoring.AddStepParams{StepID: "s", Step: json.RawMessage(c.step), Routes: c.routes, Incoming: c.incoming}, find)
			})
			is.Equal(kindOf(err), c.kind)
			if c.refusal != "" {
				is.Equal(err.Error(), c.refusal)
			}
		})
	}
}

func TestUpdateCapabilityStepPatchesOnlyTheFieldsGiven(t *testing.T) {
	is := is.New(t)
	retry, desc := 3, "fetch it"
	doc, err := authoring.UpdateCapabilityStep(withFetch(t), authoring.UpdateCapabilityStepParams{
		StepID: "get", Retry: authoring.Field[int]{Set: true, Value: &retry}, Desc: authoring.Field[string]{Set: true, Value: &desc}}, find)
	is.NoErr(err)
	is.Equal(at(doc, "steps", "get", "retry"), 3)
	doc, err = authoring.UpdateCapabilityStep(doc, authoring.UpdateCapabilityStepParams{StepID: "get", Retry: authoring.Field[int]{Set: true}}, find)
	is.NoErr(err)
	_, kept := at(doc, "steps", "get").(map[string]any)["retry"]
	is.True(!kept)                                        // null clears
	is.Equal(at(doc, "steps", "get", "desc"), "fetch it") // what is not given stays

	err = authoring.UpdateCapabilityStepParams{StepID: "get"}.Check()
	is.Equal(kindOf(err), authoring.Malformed) // nothing given
	_, err = authoring.UpdateCapabilityStep(doc, authoring.UpdateCapabilityStepParams{StepID: "nope", Retry: authoring.Field[int]{Set: true}}, find)
	is.Equal(kindOf(err), authoring.NotFound)
}

func TestBranchAndHandleRouteOutcomesAndKeepTheOthers(t *testing.T) {
	is := is.New(t)
	doc, err := authoring.Branch(withFetch(t), authoring.BranchParams{StepID: "get", Routes: map[string]string{"error": "retry"}}, find)
	is.NoErr(err)
	is.Equal(at(doc, "routes", "get"), map[string]any{"ok": workflow.End, "error": "retry"})
	doc, err = authoring.Handle(doc, authoring.HandleParams{Target: "log",
		Branches: []authoring.RouteSource{{StepID: "get", Outcome: "ok"}, {StepID: "retry", Outcome: "ok"}}}, find)
	is.NoErr(err)
	is.Equal(at(doc, "routes", "get"), map[string]any{"ok": "log", "error": "retry"})
	is.Equal(at(doc, "routes", "retry"), map[string]any{"ok": "log"})
	is.Equal(kindOf(authoring.HandleParams{Target: "log"}.Check()), authoring.Malformed) // branches is required
}
