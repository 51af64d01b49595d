package workflow_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// bindingDraft seeds state (person.name and n), then calls
// fx.default.anything with the input bindings under test.
func bindingDraft(bindings string) string {
	return `{"name":"w","start":"seed",
		"state_schema":{"type":"object","properties":{"person.name":{"type":"string"},"n":{"type":"number"}}},
		"steps":{"seed":{"use":"wf.std.constant","input":[{"target":"value","value":{"first":"Ada","n":3}}],
		    "output":[{"source":"value.first","target":"state.\"person.name\""},{"source":"value.n","target":{"root":"state","parts":["n"]}}]},
		  "call":{"use":"fx.default.anything","input":` + bindings + `}},
		"routes":{"seed":{"ok":"call"},"call":{"ok":"__end__","error":"__end__"}}}`
}

var bindingInput = workflow.Object{
	"x": 1.0, "list": []any{1.0, 2.0}, "person.name": "in-dot",
	"obj": workflow.Object{"k": "v", "dotted.key": 2.0},
}

func TestInputBindingsResolve(t *testing.T) {
	for _, tc := range []struct {
		name, bindings string
		want           workflow.Object
		err            string
	}{
		{name: "path", bindings: `[{"target":"a","path":"input.x"}]`, want: workflow.Object{"a": 1.0}},
		{name: "structural paths", bindings: `[{"target":{"root":"local","parts":["a"]},"path":{"root":"input","parts":["obj","k"]}}]`, want: workflow.Object{"a": "v"}},
		{name: "nested target", bindings: `[{"target":"a.b","path":"input.x"},{"target":"a.c","value":2}]`, want: workflow.Object{"a": workflow.Object{"b": 1.0, "c": 2.0}}},
		{name: "quoted target", bindings: `[{"target":"\"a.b\"","path":"input.x"}]`, want: workflow.Object{"a.b": 1.0}},
		{name: "single-quoted key", bindings: `[{"target":"a","path":"input.obj.'dotted.key'"}]`, want: workflow.Object{"a": 2.0}},
		{name: "quoted input key", bindings: `[{"target":"a","path":"input.\"person.name\""}]`, want: workflow.Object{"a": "in-dot"}},
		{name: "quoted state key", bindings: `[{"target":"a","path":"state.\"person.name\""}]`, want: workflow.Object{"a": "Ada"}},
		{name: "structural state key with a dot", bindings: `[{"target":"a","path":{"root":"state","parts":["person.name"]}}]`, want: workflow.Object{"a": "Ada"}},
		{name: "absent source is left out", bindings: `[{"target":"a","path":"input.nope"},{"target":"b","path":"state.n"}]`, want: workflow.Object{"b": 3.0}},
		{name: "whole payload target", bindings: `[{"target":".","path":"input.obj"}]`, want: workflow.Object{"k": "v", "dotted.key": 2.0}},
		{name: "whole payload target needs an object", bindings: `[{"target":".","path":"input.x"}]`, err: `step "call": whole-payload target needs an object, got number`},
		{name: "values", bindings: `[{"target":"n","value":1.5},{"target":"s","value":"x"},{"target":"z","value":null},{"target":"o","value":{"k":[true]}}]`,
			want: workflow.Object{"n": 1.5, "s": "x", "z": nil, "o": workflow.Object{"k": []any{true}}}},
		{name: "literal expression", bindings: `[{"target":"a","expression":{"kind":"literal","value":null}}]`, want: workflow.Object{"a": nil}},
		{name: "path expression", bindings: `[{"target":"a","expression":{"kind":"path","path":"input.list"}}]`, want: workflow.Object{"a": []any{1.0, 2.0}}},
		{name: "array expression", bindings: `[{"target":"a","expression":{"kind":"array","items":[
			{"kind":"path","path":"input.x"},{"kind":"literal","value":"two"},{"kind":"array","items":[]}]}}]`,
			want: workflow.Object{"a": []any{1.0, "two", []any{}}}},
		{name: "object expression", bindings: `[{"target":"a","expression":{"kind":"object","fields":{
			"who":{"kind":"path","path":"state.\"person.name\""},
			"tags":{"kind":"array","items":[{"kind":"literal","value":"x"},{"kind":"path","path":"input.obj.k"}]},
			"none":{"kind":"literal","value":null}}}}]`,
			want: workflow.Object{"a": workflow.Object{"who": "Ada", "tags": []any{"x", "v"}, "none": nil}}},
		{name: "expression with an absent path fails", bindings: `[{"target":"a","expression":{"kind":"array","items":[{"kind":"path","path":"input.nope"}]}}]`,
			err: `step "call": input a: path input.nope has no value`},
		{name: "context", bindings: `[{"target":"scope","path":"context.scope_id"},{"target":"lineage","path":"context.lineage_id"},
			{"target":"parent","path":"context.parent_lineage_id"},{"target":"prior","path":"context.prior_outcome"},
			{"target":"edge","path":"context.activated_incoming_edge"},{"target":"item","path":"context.loop_item"}]`,
			want: workflow.Object{"scope": "root", "lineage": "root", "parent": nil, "prior": "ok", "edge": "seed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			e, trace := runDraft(t, bindingDraft(tc.bindings), bindingInput, echoing)
			if tc.err != "" {
				errHas(t, e, tc.err)
				return
			}
			is.Equal(e.Status(), workflow.StatusCompleted)
			is.Equal(entry(t, trace, "root", "seed").StateChanges, workflow.Object{`state."person.name"`: "Ada", "state.n": 3.0})
			is.Equal(entry(t, trace, "root", "call").ResolvedInput, tc.want)
		})
	}
}

func TestOutputBindings(t *testing.T) {
	for _, tc := range []struct {
		name, output string
		answer       workflow.Object
		changes      workflow.Object
		state        workflow.Object
		err          string
	}{
		{name: "field", output: `[{"source":"a","target":"state.r"}]`, answer: workflow.Object{"a": 1.0},
			changes: workflow.Object{"state.r": 1.0}, state: workflow.Object{"r": 1.0}},
		{name: "nested source and target", output: `[{"source":"a.b","target":"state.r.deep"}]`, answer: workflow.Object{"a": workflow.Object{"b": "x"}},
			changes: workflow.Object{"state.r.deep": "x"}, state: workflow.Object{"r": workflow.Object{"deep": "x"}}},
		{name: "whole output", output: `[{"source":".","target":"state.r"}]`, answer: workflow.Object{"a": 1.0, "b": nil},
			changes: workflow.Object{"state.r": workflow.Object{"a": 1.0, "b": nil}}, state: workflow.Object{"r": workflow.Object{"a": 1.0, "b": nil}}},
		{name: "null is a value", output: `[{"source":"a","target":"state.r"}]`, answer: workflow.Object{"a": nil},
			changes: workflow.Object{"state.r": nil}, state: workflow.Object{"r": nil}},
		{name: "quoted target", output: `[{"source":"a","target":"state.\"x.y\""}]`, answer: workflow.Object{"a": 1.0},
			changes: workflow.Object{`state."x.y"`: 1.0}, state: workflow.Object{"x.y": 1.0}},
		{name: "missing source fails", output: `[{"source":"a","target":"state.r"},{"source":"b","target":"state.s"}]`, answer: workflow.Object{"a": 1.0},
			err: `step "call": output has no field b for state.s`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			e, trace := runDraft(t, `{"name":"w","start":"call",
				"steps":{"call":{"use":"fx.default.anything","output":`+tc.output+`}},
				"routes":{"call":{"ok":"__end__","error":"__end__"}}}`, nil,
				func(workflow.Call) workflow.Result { return workflow.Result{Outcome: "ok", Output: tc.answer} })
			if tc.err != "" {
				errHas(t, e, tc.err)
				is.Equal(e.State(), workflow.Object{}) // a failed step commits nothing it wrote first
				return
			}
			is.Equal(trace[0].StateChanges, tc.changes)
			is.Equal(e.State(), tc.state)
		})
	}
}

func TestPathsParseAndPrintCanonically(t *testing.T) {
	for _, tc := range []struct {
		kind, in, want, err string
	}{
		{kind: "graph", in: "input.text", want: "input.text"},
		{kind: "graph", in: "state", want: "state"},
		{kind: "graph", in: `state."person.name".first`, want: `state."person.name".first`},
		{kind: "graph", in: `state.'person.name'`, want: `state."person.name"`},
		{kind: "graph", in: `state."bare"`, want: "state.bare"},
		{kind: "graph", in: `context."a b"`, want: `context."a b"`},
		{kind: "graph", in: `input."quo\"te"`, want: `input."quo\"te"`},
		{kind: "graph", in: "output.x", err: `must start with input, state or context`},
		{kind: "graph", in: "state..x", err: `invalid key ""`},
		{kind: "graph", in: "state.x.", err: `ends with a dot`},
		{kind: "graph", in: "state.a b", err: `invalid key "a b"`},
		{kind: "graph", in: `state."open`, err: `unterminated quoted key`},
		{kind: "graph", in: `state."a"b`, err: `needs a dot after key "a"`},
		{kind: "state", in: "state.r", want: "state.r"},
		{kind: "state", in: "state", err: `must be a field path under state`},
		{kind: "state", in: "input.r", err: `must be a field path under state`},
		{kind: "local", in: ".", want: "."},
		{kind: "local", in: "a.b", want: "a.b"},
		{kind: "local", in: `"a.b"`, want: `"a.b"`},
	} {
		t.Run(tc.kind+" "+tc.in, func(t *testing.T) {
			is := is.New(t)
			var f interface {
				Err() error
				MarshalJSON() ([]byte, error)
			}
			switch tc.kind {
			case "graph":
				f = workflow.GraphOf(tc.in)
			case "state":
				f = workflow.StateOf(tc.in)
			default:
				f = workflow.LocalOf(tc.in)
			}
			if tc.err != "" {
				is.True(f.Err() != nil)
				is.True(strings.Contains(f.Err().Error(), tc.err))
				data, err := f.MarshalJSON()
				is.NoErr(err)
				is.Equal(string(data), mustJSON(t, tc.in)) // a malformed path keeps what was written
				return
			}
			is.NoErr(f.Err())
			data, err := f.MarshalJSON()
			is.NoErr(err)
			is.Equal(string(data), mustJSON(t, tc.want))
		})
	}
}

func TestStructuralPathsDecodeAndEncodeAsStrings(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: `{"root":"state","parts":["person.name","first"]}`, want: `"state.\"person.name\".first"`},
		{in: `{"root":"input","parts":[]}`, want: `"input"`},
		{in: `{"root":"output","parts":["x"]}`, err: "must start with input, state or context"},
		{in: `{"root":"state","parts":[""]}`, err: "empty key"},
		{in: `{"root":"state","parts":["x"],"extra":1}`, err: "is a string or {root, parts}"},
		{in: `42`, err: "is a string or {root, parts}"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			is := is.New(t)
			var p workflow.GraphPath
			is.NoErr(json.Unmarshal([]byte(tc.in), &p)) // decoding never fails: validation reports
			if tc.err != "" {
				is.True(p.Err() != nil)
				is.True(strings.Contains(p.Err().Error(), tc.err))
				return
			}
			is.NoErr(p.Err())
			data, err := json.Marshal(p)
			is.NoErr(err)
			is.Equal(string(data), tc.want)
		})
	}
}

func TestAPlanEncodesItsPathsCanonically(t *testing.T) {
	is := is.New(t)
	p := planOf(t, bindingDraft(`[{"target":{"root":"local","parts":["a","b.c"]},"path":{"root":"state","parts":["person.name"]}}]`))
	data, err := json.Marshal(p)
	is.NoErr(err)
	for _, want := range []string{
		`"target":"a.\"b.c\"","path":"state.\"person.name\""`,
		`"source":"value.first","target":"state.\"person.name\""`,
		`"source":"value.n","target":"state.n"`,
	} {
		is.True(strings.Contains(string(data), want))
	}
	// The canonical plan decodes to the same plan.
	var back workflow.Plan
	is.NoErr(json.Unmarshal(data, &back))
	again, err := json.Marshal(back)
	is.NoErr(err)
	is.Equal(string(again), string(data))
}

func TestLegacyUseMapsBecomeBindings(t *testing.T) {
	is := is.New(t)
	d, diags := parse(t, `{"name":"w","start":"call",
		"state_schema":{"type":"object","properties":{"r":{},"person.name":{}}},
		"output_schema":{"type":"object","properties":{"r":{}}},
		"steps":{"call":{"use":"fx.default.anything",
		  "with":{"mode":"fast","none":null},
		  "in":{"input.x":"a","input.\"person.name\"":"who.name"},
		  "out":{"a":"state.r"}}},
		"routes":{"call":{"ok":"__end__","error":"__end__"}}}`)
	is.Equal(diags, nil)
	step := d.Steps["call"]
	is.Equal(mustJSON(t, step.Input), `[{"target":"mode","value":"fast"},{"target":"none","value":null},`+
		`{"target":"who.name","path":"input.\"person.name\""},{"target":"a","path":"input.x"}]`)
	is.Equal(mustJSON(t, step.Output), `[{"source":"a","target":"state.r"}]`)
	is.Equal(workflow.Blocking(workflow.ValidateDraft(d, fixtures)), nil)

	p, err := workflow.Compile(d)
	is.NoErr(err)
	e := start(t, workflow.Program{Root: p}, workflow.Object{"x": 7.0, "person.name": "Ada"})
	trace := drive(t, e, echoing)
	is.Equal(trace[0].ResolvedInput, workflow.Object{"mode": "fast", "none": nil, "who": workflow.Object{"name": "Ada"}, "a": 7.0})
	is.Equal(e.Output(), workflow.Object{"r": 7.0})
}

func TestParseReportsEveryMalformedStep(t *testing.T) {
	for _, tc := range []struct {
		name, step, msg string
	}{
		{"unknown key beside use", `{"use":"fx.default.anything","colour":"red"}`, `a use step has no key "colour"`},
		{"unknown key beside a kind", `{"join":{},"routes":{}}`, `a join step has no key "routes"`},
		{"unknown key inside a kind", `{"foreach":{"over":"input.xs","as":"x","colour":1}}`, `foreach: json: unknown field "colour"`},
		{"unknown key in a binding", `{"use":"fx.default.anything","input":[{"target":"a","value":1,"default":2}]}`, `unknown field "default"`},
		{"unknown key in a condition", `{"when":{"if":{"op":"exists","path":"input.x","arg":null,"extra":1},"then":"__end__"}}`, `unknown field "extra"`},
		{"two kinds", `{"join":{},"end":{}}`, `exactly one kind key`},
		{"no kind", `{"input":[]}`, `exactly one kind key`},
		{"not an object", `["use"]`, `a step is an object with one kind key`},
		{"legacy and canonical input", `{"use":"fx.default.anything","with":{"a":1},"input":[{"target":"b","value":2}]}`, `either legacy in/with/out maps or input/output bindings`},
		{"legacy map not a map", `{"use":"fx.default.anything","in":["input.x"]}`, `legacy "in" map`},
		{"legacy path malformed", `{"use":"fx.default.anything","in":{"output.x":"a"}}`, `legacy "in" map, output.x`},
		{"use names nothing", `{"use":"","input":[]}`, `use: names no capability`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			d, diags := parse(t, `{"name":"w","start":"ok","steps":{"ok":{"join":{}},"bad":`+tc.step+`},"routes":{"ok":{"done":"__end__"}}}`)
			is.Equal(len(diags), 1)
			is.Equal(diags[0].Code, "draft_invalid")
			is.Equal(diags[0].Path, "steps.bad")
			is.Equal(*diags[0].StepID, "bad")
			if !strings.Contains(diags[0].Message, tc.msg) {
				t.Fatalf("message %q does not contain %q", diags[0].Message, tc.msg)
			}
			_, kept := d.Steps["bad"]
			is.True(!kept)                       // the bad step is reported, not half-parsed
			is.Equal(len(d.Steps), 1)            // the others stay
			is.Equal(d.Outcomes, []string{"ok"}) // defaults still apply
		})
	}
}

func TestParseRefusesUnknownTopLevelKeys(t *testing.T) {
	is := is.New(t)
	_, diags := parse(t, `{"name":"w","start":"a","steps":{},"colour":"red"}`)
	is.Equal(len(diags), 1)
	is.Equal(diags[0].Code, "draft_invalid")
	is.Equal(diags[0].Path, "")
	is.True(strings.Contains(diags[0].Message, `unknown field "colour"`))
}

// nested builds an expression nested depth levels deep: arrays around a
// literal.
func nested(depth int) string {
	return strings.Repeat(`{"kind":"array","items":[`, depth-1) + `{"kind":"literal","value":1}` + strings.Repeat(`]}`, depth-1)
}

// wide builds an object expression of n expression nodes in all.
func wide(n int) string {
	fields := make([]string, n-1)
	for i := range fields {
		fields[i] = `"f` + strconv.Itoa(i) + `":{"kind":"literal","value":` + strconv.Itoa(i) + `}`
	}
	return `{"kind":"object","fields":{` + strings.Join(fields, ",") + `}}`
}

func TestExpressionLimits(t *testing.T) {
	for _, tc := range []struct {
		name, expr, err string
	}{
		{"depth 64", nested(workflow.MaxExpressionDepth), ""},
		{"depth 65", nested(workflow.MaxExpressionDepth + 1), "expression is deeper than 64"},
		{"1024 nodes", wide(workflow.MaxExpressionNodes), ""},
		{"1025 nodes", wide(workflow.MaxExpressionNodes + 1), "expression has more than 1024 nodes"},
		{"unknown kind", `{"kind":"template","value":"x"}`, `unknown expression kind "template"`},
		{"literal without value", `{"kind":"literal"}`, "a literal expression needs a value"},
		{"path without path", `{"kind":"path"}`, "a path expression needs a path"},
		{"malformed path", `{"kind":"path","path":"nowhere.x"}`, "must start with input, state or context"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			doc := `{"name":"w","start":"call",
				"steps":{"call":{"use":"fx.default.anything","input":[{"target":"a","expression":` + tc.expr + `}]}},
				"routes":{"call":{"ok":"__end__","error":"__end__"}}}`
			d, diags := parse(t, doc)
			is.Equal(diags, nil)
			diags = workflow.Blocking(workflow.ValidateDraft(d, fixtures))
			if tc.err != "" {
				is.Equal(len(diags), 1)
				is.Equal(diags[0].Code, "invalid_source_path")
				is.Equal(diags[0].Path, "steps.call.input[0].expression")
				is.True(strings.Contains(diags[0].Message, tc.err))
				return
			}
			is.Equal(diags, nil)
			// At the limit it still runs.
			e, trace := runDraft(t, doc, nil, echoing)
			is.Equal(e.Status(), workflow.StatusCompleted)
			is.True(trace[0].ResolvedInput["a"] != nil)
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	is.New(t).NoErr(err)
	return string(data)
}
