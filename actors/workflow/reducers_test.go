package workflow_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// twoWrites writes first, then second, to state.v through the reducer
// declared by property (the JSON schema of state.v).
func twoWrites(t *testing.T, property string, first, second any) string {
	t.Helper()
	return `{"name":"w","start":"a",
		"state_schema":{"type":"object","properties":{"v":` + property + `}},
		"output_schema":{"type":"object","properties":{"v":{}}},
		"steps":{
		  "a":{"use":"wf.std.constant","input":[{"target":"value","value":` + mustJSON(t, first) + `}],"output":[{"source":"value","target":"state.v"}]},
		  "b":{"use":"wf.std.constant","input":[{"target":"value","value":` + mustJSON(t, second) + `}],"output":[{"source":"value","target":"state.v"}]}},
		"routes":{"a":{"ok":"b"},"b":{"ok":"__end__"}}}`
}

func TestReducersThroughTheEngine(t *testing.T) {
	for _, tc := range []struct {
		name, property string
		first, second  any
		want           any
		err            string
	}{
		{name: "undeclared replaces", property: `{}`, first: 1.0, second: 2.0, want: 2.0},
		{name: "replace", property: `{"reducer":"wf.std.replace"}`, first: []any{1.0}, second: "x", want: "x"},
		{name: "append items", property: `{"reducer":"wf.std.append"}`, first: "a", second: []any{"b", "c"}, want: []any{"a", "b", "c"}},
		{name: "append a list", property: `{"reducer":"wf.std.append"}`, first: []any{"a"}, second: []any{[]any{"b"}}, want: []any{"a", []any{"b"}}},
		{name: "merge_object", property: `{"reducer":"wf.std.merge_object"}`, first: obj{"a": 1.0, "b": 1.0}, second: obj{"b": 2.0, "c": 3.0},
			want: obj{"a": 1.0, "b": 2.0, "c": 3.0}},
		{name: "add", property: `{"reducer":"wf.std.add"}`, first: 2.0, second: 3.5, want: 5.5},
		{name: "set_union", property: `{"reducer":"wf.std.set_union"}`, first: []any{1.0, 2.0, 1.0}, second: []any{2.0, 3.0}, want: []any{1.0, 2.0, 3.0}},
		{name: "max numbers", property: `{"reducer":"wf.std.max"}`, first: 7.0, second: 3.0, want: 7.0},
		{name: "max strings", property: `{"reducer":"wf.std.max"}`, first: "b", second: "c", want: "c"},
		{name: "ref form", property: `{"reducer":{"ref":{"source":"wf.std","capability_key":"append"}}}`, first: 1.0, second: 2.0, want: []any{1.0, 2.0}},
		{name: "ref form with empty config", property: `{"reducer":{"ref":{"source":"wf.std","capability_key":"add"},"config":{}}}`, first: 1.0, second: 2.0, want: 3.0},
		{name: "ref form with config the reducer does not take", property: `{"reducer":{"ref":{"source":"wf.std","capability_key":"add"},"config":{"step":2}}}`,
			first: 1.0, second: 2.0, err: `step "a": state.v: wf.std.add: wf.std.add takes no config, got ["step"]`},
		{name: "ref form without capability_key", property: `{"reducer":{"ref":{"source":"wf.std"}}}`, first: 1.0, second: 2.0,
			err: `step "a": state.v: reducer {ref, config} needs ref.source and ref.capability_key`},
		{name: "unknown reducer", property: `{"reducer":"wf.std.median"}`, first: 1.0, second: 2.0, err: `step "a": state.v: unknown reducer "wf.std.median"`},
		{name: "reducer of the wrong shape", property: `{"reducer":7}`, first: 1.0, second: 2.0, err: `step "a": state.v: reducer must be a name or {ref, config}, not number`},
		{name: "add a string", property: `{"reducer":"wf.std.add"}`, first: 1.0, second: "2", err: `step "b": state.v: wf.std.add: wf.std.add: incoming value: expected number, got string`},
		{name: "max of mixed types", property: `{"reducer":"wf.std.max"}`, first: 1.0, second: "2", err: `step "b": state.v: wf.std.max`},
		{name: "merge a non-object", property: `{"reducer":"wf.std.merge_object"}`, first: obj{}, second: []any{}, err: `step "b": state.v: wf.std.merge_object`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			e, trace := runDraft(t, twoWrites(t, tc.property, tc.first, tc.second), nil, noCalls(t))
			if tc.err != "" {
				errHas(t, e, tc.err)
				return
			}
			is.Equal(e.Status(), workflow.StatusCompleted)
			is.Equal(e.Output(), workflow.Object{"v": tc.want})
			// The trace shows the value stored after the reducer.
			is.Equal(trace[1].StateChanges, workflow.Object{"state.v": tc.want})
		})
	}
}

func TestANestedPropertyOwnsItsReducer(t *testing.T) {
	is := is.New(t)
	e, trace := runDraft(t, `{"name":"w","start":"a",
		"state_schema":{"type":"object","properties":{"stats":{"type":"object","properties":{
		  "total":{"type":"number","reducer":"wf.std.add"},"last":{"type":"number"}}}}},
		"output_schema":{"type":"object","properties":{"stats":{}}},
		"steps":{"a":{"use":"wf.std.constant","input":[{"target":"value","value":2}],
		    "output":[{"source":"value","target":"state.stats.total"},{"source":"value","target":"state.stats.last"}]},
		  "b":{"use":"wf.std.constant","input":[{"target":"value","value":5}],
		    "output":[{"source":"value","target":"state.stats.total"},{"source":"value","target":"state.stats.last"}]}},
		"routes":{"a":{"ok":"b"},"b":{"ok":"__end__"}}}`, nil, noCalls(t))
	is.Equal(e.Output(), workflow.Object{"stats": workflow.Object{"total": 7.0, "last": 5.0}})
	is.Equal(trace[1].StateChanges, workflow.Object{"state.stats.total": 7.0, "state.stats.last": 5.0})
}

// siblings is a concurrent foreach whose items each write their item to
// state.v (and, with extra, something more).
func siblings(property, extra string) string {
	return `{"name":"w","start":"each",
		"state_schema":{"type":"object","properties":{"v":` + property + `}},
		"output_schema":{"type":"object","properties":{"v":{}}},
		"steps":{"each":{"foreach":{"over":"input.items","as":"x","mode":"concurrent"}},
		  "put":{"use":"wf.std.constant","input":[{"target":"value","path":"context.x"}],
		    "output":[{"source":"value","target":"state.v"}` + extra + `]}},
		"routes":{"each":{"loop":"put","done":"__end__"},"put":{"ok":"each"}}}`
}

func TestConcurrentSiblingWritesMeetAtTheBarrier(t *testing.T) {
	for _, tc := range []struct {
		name, property string
		items          []any
		want           any
		err            string
	}{
		{name: "replace is refused", property: `{"reducer":"wf.std.replace"}`, items: []any{1.0, 2.0},
			err: `foreach "each": items 0 and 1 both write state.v, which needs a mergeable reducer (it has wf.std.replace)`},
		{name: "undeclared is replace", property: `{}`, items: []any{1.0, 2.0},
			err: `items 0 and 1 both write state.v, which needs a mergeable reducer (it has wf.std.replace)`},
		{name: "one item may replace", property: `{"reducer":"wf.std.replace"}`, items: []any{1.0}, want: 1.0},
		{name: "append merges in item order", property: `{"reducer":"wf.std.append"}`, items: []any{"a", "b", "c", "d", "e"}, want: []any{"a", "b", "c", "d", "e"}},
		{name: "add", property: `{"reducer":"wf.std.add"}`, items: []any{1.0, 2.0, 3.0}, want: 6.0},
		{name: "set_union", property: `{"reducer":"wf.std.set_union"}`, items: []any{[]any{1.0}, []any{1.0, 2.0}}, want: []any{1.0, 2.0}},
		{name: "max", property: `{"reducer":"wf.std.max"}`, items: []any{3.0, 9.0, 4.0}, want: 9.0},
		{name: "merge_object", property: `{"reducer":"wf.std.merge_object"}`, items: []any{obj{"a": 1.0}, obj{"a": 2.0, "b": 2.0}}, want: obj{"a": 2.0, "b": 2.0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			prog := workflow.Program{Root: planOf(t, siblings(tc.property, ""))}
			e := start(t, prog, workflow.Object{"items": tc.items})
			// Complete nothing by hand: the items are inline, all in one Advance.
			trace := drive(t, e, noCalls(t))
			if tc.err != "" {
				errHas(t, e, tc.err)
				is.Equal(e.State(), workflow.Object{}) // nothing of the loop committed
				return
			}
			is.Equal(e.Status(), workflow.StatusCompleted)
			is.Equal(e.Output(), workflow.Object{"v": tc.want})
			is.Equal(trace[len(trace)-1].StateChanges, workflow.Object{"state.v": tc.want})
		})
	}
}

func TestConcurrentSiblingsMayNotWriteOverlappingPaths(t *testing.T) {
	is := is.New(t)
	// Item 0 writes state.v (merge_object); item 1 writes state.v.x inside it.
	e, _ := runDraft(t, `{"name":"w","start":"each",
		"state_schema":{"type":"object","properties":{"v":{"type":"object","reducer":"wf.std.merge_object"}}},
		"steps":{"each":{"foreach":{"over":"input.items","as":"x","mode":"concurrent"}},
		  "route":{"when":{"if":{"op":"eq","left":{"path":"context.loop_index"},"right":{"value":0}},"then":"whole","otherwise":"part"}},
		  "whole":{"use":"wf.std.constant","input":[{"target":"value","value":{"y":1}}],"output":[{"source":"value","target":"state.v"}]},
		  "part":{"use":"wf.std.constant","input":[{"target":"value","value":2}],"output":[{"source":"value","target":"state.v.x"}]}},
		"routes":{"each":{"loop":"route","done":"__end__"},"whole":{"ok":"each"},"part":{"ok":"each"}}}`,
		workflow.Object{"items": []any{"a", "b"}}, noCalls(t))
	errHas(t, e, `foreach "each": items 0 and 1 write overlapping paths state.v and state.v.x`)
	is.Equal(e.State(), workflow.Object{})
}

func TestAFailedCommitLeavesTheStateAsItWas(t *testing.T) {
	is := is.New(t)
	// Serial items, skip on error: the second item's commit breaks the
	// state schema (n must stay below 3) half way; none of it stays.
	e, _ := runDraft(t, `{"name":"w","start":"each",
		"state_schema":{"type":"object","properties":{
		  "log":{"type":"array","reducer":"wf.std.append"},
		  "n":{"type":"number","maximum":2,"reducer":"wf.std.add"}}},
		"output_schema":{"type":"object","properties":{"log":{},"n":{}}},
		"steps":{"each":{"foreach":{"over":"input.items","as":"x","item_error":"skip"}},
		  "put":{"use":"wf.std.constant","input":[{"target":"value","path":"context.x"}],
		    "output":[{"source":"value.name","target":"state.log"},{"source":"value.n","target":"state.n"}]}},
		"routes":{"each":{"loop":"put","done":"__end__","completed_with_errors":"__end__"},"put":{"ok":"each"}}}`,
		workflow.Object{"items": []any{obj{"name": "a", "n": 1.0}, obj{"name": "b", "n": 5.0}, obj{"name": "c", "n": 1.0}}}, noCalls(t))
	is.Equal(e.Status(), workflow.StatusCompleted)
	is.Equal(e.Output(), workflow.Object{"log": []any{"a", "c"}, "n": 2.0}) // b's log entry was undone with its n
}
