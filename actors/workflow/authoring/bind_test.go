package authoring_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/authoring"
)

func TestBindProjectsTheCapabilitySchemaIntoTheWorkflowSchemas(t *testing.T) {
	for _, c := range []struct {
		name, source, target string
		schema               string // the workflow schema the field is declared in
		path                 []string
		want                 any
		step                 string // the step's bindings after
	}{
		{name: "an input field reads the workflow input", source: "input.address", target: "local.url",
			schema: "input_schema", path: []string{"address"}, want: map[string]any{"type": "string"},
			step: `{"input":[{"path":"input.address","target":"url"}],"output":[],"use":"up.fetch"}`},
		{name: "an input field reads state, nested", source: "state.req.n", target: "local.retries",
			schema: "state_schema", path: []string{"req"}, want: map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}},
			step: `{"input":[{"path":"state.req.n","target":"retries"}],"output":[],"use":"up.fetch"}`},
		{name: "an output field goes to state", source: "local.status", target: "state.code",
			schema: "state_schema", path: []string{"code"}, want: map[string]any{"type": "integer"},
			step: `{"input":[],"output":[{"source":"status","target":"state.code"}],"use":"up.fetch"}`},
		{name: "an output field goes to the workflow output through state", source: "local.body", target: "output.page",
			schema: "output_schema", path: []string{"page"}, want: map[string]any{"type": "string"},
			step: `{"input":[],"output":[{"source":"body","target":"state.page"}],"use":"up.fetch"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			p := authoring.BindParams{StepID: "get", SourcePath: c.source, TargetPath: c.target}
			doc, err := unchanged(t, withFetch(t), func(doc workflow.Object) (workflow.Object, error) {
				return authoring.Bind(doc, p, find)
			})
			is.NoErr(err)
			is.Equal(at(doc, append([]string{c.schema, "properties"}, c.path...)...), c.want)
			is.Equal(jsonOf(t, at(doc, "steps", "get")), c.step)
			again, err := authoring.Bind(doc, p, find)
			is.NoErr(err)
			is.Equal(jsonOf(t, again), jsonOf(t, doc)) // binding twice changes nothing
		})
	}
}

func TestBindToTheWorkflowOutputDeclaresItAndReadsState(t *testing.T) {
	is := is.New(t)
	doc, err := authoring.Bind(withFetch(t), authoring.BindParams{StepID: "get", SourcePath: "local.body", TargetPath: "output.page"}, find)
	is.NoErr(err)
	is.Equal(jsonOf(t, doc["output"]), `[{"path":"state.page","target":"page"}]`)
	is.Equal(at(doc, "state_schema", "properties", "page"), map[string]any{"type": "string"})
}

func TestBindLeavesAFieldTheWorkflowDeclaresAlone(t *testing.T) {
	is := is.New(t)
	doc := withFetch(t)
	doc["input_schema"] = map[string]any{"type": "object", "properties": map[string]any{"address": map[string]any{"type": "string", "format": "uri"}}}
	next, err := authoring.Bind(doc, authoring.BindParams{StepID: "get", SourcePath: "input.address", TargetPath: "local.url"}, find)
	is.NoErr(err)
	is.Equal(at(next, "input_schema", "properties", "address"), map[string]any{"type": "string", "format": "uri"})
}

func TestBindCopiesTheDefinitionsAProjectedFragmentRefersTo(t *testing.T) {
	is := is.New(t)
	withRef := catalog.Capability{Name: "up.typed", Outcomes: []string{"ok"},
		InputSchema: catalog.Object{"type": "object", "$defs": catalog.Object{"id": catalog.Object{"type": "string", "minLength": 1.0}},
			"properties": catalog.Object{"ref": catalog.Object{"type": "object", "properties": catalog.Object{"id": catalog.Object{"$ref": "#/$defs/id"}}}}},
		OutputSchema: catalog.Object{"type": "object"}}
	lookup := func(name string) (catalog.Capability, bool) { return withRef, name == withRef.Name }
	doc, err := authoring.AddStepFromCapability(emptyDraft(t), authoring.AddStepFromCapabilityParams{StepID: "s", CapabilityName: "up.typed"}, lookup)
	is.NoErr(err)
	doc, err = authoring.Bind(doc, authoring.BindParams{StepID: "s", SourcePath: "input.key", TargetPath: "local.ref"}, lookup)
	is.NoErr(err)
	is.Equal(at(doc, "input_schema", "properties", "key", "properties", "id"), map[string]any{"$ref": "#/$defs/id"})
	is.Equal(at(doc, "input_schema", "$defs", "id"), map[string]any{"type": "string", "minLength": 1.0})
}

func TestBindRefusesWhatTheCapabilityDoesNotDeclare(t *testing.T) {
	for _, c := range []struct {
		name, step, source, target string
		kind                       authoring.Kind
	}{
		{"an input the capability does not declare", "get", "input.x", "local.nope", authoring.Invalid},
		{"an output the capability does not declare", "get", "local.nope", "state.x", authoring.Invalid},
		{"a direction bind does not know", "get", "state.x", "input.y", authoring.Invalid},
		{"a path that names no field", "get", "input", "local.url", authoring.Invalid},
		{"a step that does not exist", "nope", "input.x", "local.url", authoring.NotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := unchanged(t, withFetch(t), func(doc workflow.Object) (workflow.Object, error) {
				return authoring.Bind(doc, authoring.BindParams{StepID: c.step, SourcePath: c.source, TargetPath: c.target}, find)
			})
			is.New(t).Equal(kindOf(err), c.kind)
		})
	}
}
