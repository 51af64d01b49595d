package workflow_test

import (
	"encoding/json"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// specDraft is a one-step workflow that calls spec with input as value
// bindings, writes its whole output to state.out and routes every outcome
// of the spec to the end.
func specDraft(t *testing.T, spec string, input workflow.Object) string {
	t.Helper()
	c, ok := fixtures(spec)
	if !ok {
		t.Fatalf("no spec %s", spec)
	}
	var bindings []any
	for _, k := range workflow.SortedKeys(input) {
		bindings = append(bindings, map[string]any{"target": k, "value": input[k]})
	}
	routes := map[string]any{}
	for _, o := range c.Outcomes {
		routes[o] = workflow.End
	}
	doc := map[string]any{
		"name": "w", "start": "s",
		"state_schema":  map[string]any{"type": "object", "properties": map[string]any{"out": map[string]any{}}},
		"output_schema": map[string]any{"type": "object", "properties": map[string]any{"out": map[string]any{}}},
		"steps":         map[string]any{"s": map[string]any{"use": spec, "input": bindings, "output": []any{map[string]any{"source": ".", "target": "state.out"}}}},
		"routes":        map[string]any{"s": routes},
	}
	data, err := json.Marshal(doc)
	is.New(t).NoErr(err)
	return string(data)
}

type obj = workflow.Object

var people = []any{obj{"name": "ada", "team": "x"}, obj{"name": "bo"}, obj{"name": "cy", "team": "x"}}

// specCases run each platform node spec through the engine.
var specCases = []struct {
	spec    string
	input   workflow.Object
	outcome string
	output  workflow.Object
	err     string // the run fails with this error instead
}{
	{spec: "wf.std.constant", input: obj{"value": obj{"a": []any{1.0}}}, outcome: "ok", output: obj{"value": obj{"a": []any{1.0}}}},
	{spec: "wf.std.constant", input: obj{"value": nil}, outcome: "ok", output: obj{"value": nil}},
	{spec: "wf.std.coalesce", input: obj{"value": nil, "fallback": "fb"}, outcome: "ok", output: obj{"value": "fb"}},
	{spec: "wf.std.coalesce", input: obj{"value": 0.0, "fallback": "fb"}, outcome: "ok", output: obj{"value": 0.0}},
	{spec: "wf.std.default_if_none", input: obj{"fallback": "fb"}, outcome: "ok", output: obj{"value": "fb"}},
	{spec: "wf.std.truthy", input: obj{"value": "x"}, outcome: "truthy", output: obj{"value": true}},
	{spec: "wf.std.truthy", input: obj{"value": []any{}}, outcome: "falsey", output: obj{"value": false}},
	{spec: "wf.std.runtime_error", input: obj{"message": "stop", "details": obj{"code": 7.0}}, err: `step "s": stop: {"code":7}`},
	{spec: "wf.std.runtime_error", input: obj{"message": 5.0}, err: `step "s" input: at /message: type`},
	{spec: "wf.std.pick_key", input: obj{"mapping": obj{"a": 1.0}, "key": "a"}, outcome: "ok", output: obj{"value": 1.0}},
	{spec: "wf.std.pick_key", input: obj{"mapping": obj{"a": 1.0}, "key": "b"}, outcome: "ok", output: obj{"value": nil}},
	{spec: "wf.std.pick_path", input: obj{"mapping": obj{"u": obj{"city": "Oslo"}}, "path": "u.city"}, outcome: "ok", output: obj{"value": "Oslo"}},
	{spec: "wf.std.project_fields", input: obj{"mapping": obj{"a": 1.0, "b": 2.0}, "fields": []any{"b", "z"}}, outcome: "ok", output: obj{"mapping": obj{"b": 2.0}}},
	{spec: "wf.std.rename_fields", input: obj{"mapping": obj{"a": 1.0, "b": 2.0}, "renames": obj{"a": "x"}}, outcome: "ok", output: obj{"mapping": obj{"x": 1.0}}},
	{spec: "wf.std.rename_fields", input: obj{"mapping": obj{}, "renames": obj{"a": "x", "b": "x"}}, err: `both renamed to "x"`},
	{spec: "wf.std.first_item", input: obj{"items": []any{"a", "b"}}, outcome: "ok", output: obj{"item": "a"}},
	{spec: "wf.std.first_item", input: obj{"items": []any{}}, err: `step "s" input: at /items: minItems`},
	{spec: "wf.std.first_item_or_none", input: obj{"items": []any{}}, outcome: "ok", output: obj{"item": nil}},
	{spec: "wf.std.first_item_maybe", input: obj{"items": []any{"a", "b"}}, outcome: "found", output: obj{"item": "a"}},
	{spec: "wf.std.first_item_maybe", input: obj{"items": []any{}}, outcome: "missing", output: obj{"item": nil}},
	{spec: "wf.std.last_item", input: obj{"items": []any{"a", "b"}}, outcome: "ok", output: obj{"item": "b"}},
	{spec: "wf.std.last_item_or_none", input: obj{"items": []any{}}, outcome: "ok", output: obj{"item": nil}},
	{spec: "wf.std.length", input: obj{"items": []any{1.0, 2.0, 3.0}}, outcome: "ok", output: obj{"count": 3.0}},
	{spec: "wf.std.is_empty", input: obj{"items": []any{}}, outcome: "ok", output: obj{"value": true}},
	{spec: "wf.std.filter_items", input: obj{"items": people, "key": "team", "value": "x"}, outcome: "ok", output: obj{"items": []any{people[0], people[2]}}},
	{spec: "wf.std.filter_items_present", input: obj{"items": people, "key": "team"}, outcome: "ok", output: obj{"items": []any{people[0], people[2]}}},
	{spec: "wf.std.extract_field", input: obj{"items": people, "field": "name"}, outcome: "ok", output: obj{"values": []any{"ada", "bo", "cy"}}},
	{spec: "wf.std.concat", input: obj{"items": []any{"a", "b"}, "separator": "-"}, outcome: "ok", output: obj{"text": "a-b"}},
	{spec: "wf.std.concat", input: obj{"items": []any{"a", 1.0}}, err: `step "s" input: at /items/1: type`},
	{spec: "wf.recipes.extract_text_content", input: obj{"content": []any{
		obj{"type": "text", "text": "hello"}, obj{"type": "image", "data": "…"}, obj{"type": "text", "text": "world"}}, "separator": " "},
		outcome: "ok", output: obj{"text": "hello world"}},
	{spec: "wf.recipes.extract_text_content", input: obj{"content": []any{}}, outcome: "ok", output: obj{"text": ""}},
}

func TestEveryPlatformSpecRunsInline(t *testing.T) {
	for _, tc := range specCases {
		t.Run(tc.spec+"/"+tc.outcome+tc.err, func(t *testing.T) {
			is := is.New(t)
			e, trace := runDraft(t, specDraft(t, tc.spec, tc.input), nil, noCalls(t))
			if tc.err != "" {
				errHas(t, e, tc.err)
				is.Equal(len(trace), 0)
				return
			}
			is.Equal(e.Status(), workflow.StatusCompleted)
			is.Equal(len(trace), 1)
			is.Equal(trace[0].StepType, workflow.NodeCall)
			is.Equal(trace[0].ResolvedInput, tc.input)
			is.Equal(trace[0].Outcome, tc.outcome)
			is.Equal(trace[0].Output, tc.output)
			// Every outcome but a tool's "error" commits the output.
			is.Equal(trace[0].StateChanges, workflow.Object{"state.out": tc.output})
			is.Equal(e.Output(), workflow.Object{"out": tc.output})
		})
	}
}

func TestEveryPlatformSpecHasAnEngineCase(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range specCases {
		covered[tc.spec] = true
	}
	inline := 0
	for _, c := range workflow.Builtins() {
		if _, ok := workflow.Builtin(c.Name); !ok {
			continue // a platform capability the run actor calls, not a node spec
		}
		inline++
		if !covered[c.Name] {
			t.Errorf("platform spec %s has no engine case", c.Name)
		}
	}
	is.New(t).Equal(len(covered), inline)
}
