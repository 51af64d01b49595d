package workflow_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

const useDraft = `{"name":"w","start":"call",
	"input_schema":{"type":"object","properties":{"who":{"type":"string"}}},
	"state_schema":{"type":"object","properties":{"said":{"type":"string"}}},
	"output_schema":{"type":"object","properties":{"said":{"type":"string"}}},
	"steps":{"call":{"use":"fx.default.echo","retry":2,"timeout_seconds":5,
	  "input":[{"target":"text","path":"input.who"}],
	  "output":[{"source":"text","target":"state.said"}]}},
	"routes":{"call":{"ok":"__end__","error":"__end__"}}}`

func TestUseStepHandsOutACallAndCommitsItsOutput(t *testing.T) {
	is := is.New(t)
	e := start(t, workflow.Program{Root: planOf(t, useDraft)}, workflow.Object{"who": "ada"})
	p := e.Advance()
	is.Equal(len(p.Trace), 0) // nothing ran to its end yet
	is.Equal(len(p.Calls), 1)
	c := p.Calls[0]
	is.Equal(c.Capability, "fx.default.echo")
	is.Equal(c.FrameID, "root")
	is.Equal(c.NodeID, "call")
	is.Equal(c.Input, workflow.Object{"text": "ada"})
	is.Equal(*c.Retry, 2)
	is.Equal(*c.TimeoutSeconds, 5)
	is.Equal(e.Outstanding(), []workflow.Call{c})

	is.NoErr(e.Complete(c.ID, workflow.Result{Outcome: "ok", Output: workflow.Object{"text": "hi ada"}, Attempts: 2, Generation: 7}))
	is.True(e.Complete(c.ID, workflow.Result{}) != nil) // a call completes once
	p = e.Advance()
	is.Equal(p.Trace, []workflow.TraceEntry{{
		FrameID: "root", NodeID: "call", StepType: workflow.NodeCall,
		ResolvedInput: workflow.Object{"text": "ada"}, Outcome: "ok", NextNodeID: workflow.End,
		Output: workflow.Object{"text": "hi ada"}, StateChanges: workflow.Object{"state.said": "hi ada"},
		Attempts: 2, Generation: 7,
	}})
	is.Equal(e.Status(), workflow.StatusCompleted)
	is.Equal(e.Outcome(), workflow.OutcomeOK)
	is.Equal(e.Output(), workflow.Object{"said": "hi ada"})
	is.Equal(e.Steps(), 1)
}

func TestUseStepOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		result  workflow.Result
		status  string
		changes workflow.Object
		err     string
	}{
		{"ok commits", workflow.Result{Outcome: "ok", Output: workflow.Object{"text": "x"}}, workflow.StatusCompleted, workflow.Object{"state.said": "x"}, ""},
		{"empty outcome is ok", workflow.Result{Output: workflow.Object{"text": "x"}}, workflow.StatusCompleted, workflow.Object{"state.said": "x"}, ""},
		{"error routes without touching state", workflow.Result{Outcome: "error", Output: workflow.Object{"content": []any{}}}, workflow.StatusCompleted, workflow.Object{}, ""},
		{"unrouted outcome fails", workflow.Result{Outcome: "maybe"}, workflow.StatusFailed, nil, `step "call": outcome "maybe" has no route`},
		{"call error fails", workflow.Result{Err: errors.New("connection reset")}, workflow.StatusFailed, nil, `step "call": connection reset`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			e, trace := runDraft(t, useDraft, workflow.Object{"who": "ada"}, func(workflow.Call) workflow.Result { return tc.result })
			is.Equal(e.Status(), tc.status)
			if tc.err != "" {
				is.Equal(e.Err(), tc.err)
				is.Equal(len(trace), 0) // a failed step records no entry
				is.Equal(e.State(), workflow.Object{})
				return
			}
			is.Equal(len(trace), 1)
			is.Equal(trace[0].StateChanges, tc.changes)
			is.Equal(trace[0].NextNodeID, workflow.End)
		})
	}
}

func TestDecisionStepsLowerToConditionChains(t *testing.T) {
	const big = `{"op":"gt","left":{"path":"input.n"},"right":{"value":3}}`
	for _, tc := range []struct {
		name, step string
		n          float64
		want       []string // frame node outcome->next
	}{
		{"when then", `{"when":{"if":` + big + `,"then":"x","otherwise":"y"}}`, 5,
			[]string{"root d true->x", "root x done->__end__"}},
		{"when otherwise", `{"when":{"if":` + big + `,"then":"x","otherwise":"y"}}`, 1,
			[]string{"root d false->y", "root y done->__end__"}},
		{"when default otherwise ends", `{"when":{"if":` + big + `,"then":"x"}}`, 1,
			[]string{"root d false->__end__"}},
		{"choose first clause", `{"choose":{"clauses":[{"if":` + big + `,"then":"x"},{"if":{"op":"exists","path":"input.n"},"then":"y"}]}}`, 5,
			[]string{"root d true->x", "root x done->__end__"}},
		{"choose second clause", `{"choose":{"clauses":[{"if":` + big + `,"then":"x"},{"if":{"op":"exists","path":"input.n"},"then":"y"}]}}`, 1,
			[]string{"root d false->d_2", "root d_2 true->y", "root y done->__end__"}},
		{"choose default", `{"choose":{"clauses":[{"if":` + big + `,"then":"x"}],"default":"y"}}`, 1,
			[]string{"root d false->y", "root y done->__end__"}},
		{"match second case", `{"match":{"value":"input.n","cases":[{"equals":1,"then":"x"},{"equals":2,"then":"y"}]}}`, 2,
			[]string{"root d false->d_2", "root d_2 true->y", "root y done->__end__"}},
		{"match default", `{"match":{"value":"input.n","cases":[{"equals":1,"then":"x"}],"default":"y"}}`, 9,
			[]string{"root d false->y", "root y done->__end__"}},
		{"match without default ends", `{"match":{"value":"input.n","cases":[{"equals":1,"then":"x"},{"equals":2,"then":"y"}]}}`, 9,
			[]string{"root d false->d_2", "root d_2 false->__end__"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			e, trace := runDraft(t, `{"name":"w","start":"d",
				"input_schema":{"type":"object","properties":{"n":{"type":"number"}}},
				"steps":{"d":`+tc.step+`,"x":{"join":{}},"y":{"join":{}}},
				"routes":{"x":{"done":"__end__"},"y":{"done":"__end__"}}}`, workflow.Object{"n": tc.n}, noCalls(t))
			is.Equal(e.Status(), workflow.StatusCompleted)
			is.Equal(hops(trace), tc.want)
			for _, en := range trace {
				if en.StepType != workflow.NodeCondition {
					continue
				}
				is.Equal(en.ResolvedInput, workflow.Object{})
				is.Equal(en.Output, workflow.Object{"predicate": en.Outcome == workflow.OutcomeTrue})
				is.Equal(en.StateChanges, workflow.Object{})
			}
		})
	}
}

func TestJoinContinuesWithDone(t *testing.T) {
	is := is.New(t)
	// Two branches meet at one join.
	e, trace := runDraft(t, `{"name":"w","start":"d",
		"input_schema":{"type":"object","properties":{"left":{"type":"boolean"}}},
		"state_schema":{"type":"object","properties":{"side":{"type":"string"}}},
		"output_schema":{"type":"object","properties":{"side":{"type":"string"}}},
		"steps":{"d":{"when":{"if":{"op":"eq","left":{"path":"input.left"},"right":{"value":true}},"then":"l","otherwise":"r"}},
		  "l":{"use":"wf.std.constant","input":[{"target":"value","value":"left"}],"output":[{"source":"value","target":"state.side"}]},
		  "r":{"use":"wf.std.constant","input":[{"target":"value","value":"right"}],"output":[{"source":"value","target":"state.side"}]},
		  "j":{"join":{}}},
		"routes":{"l":{"ok":"j"},"r":{"ok":"j"},"j":{"done":"__end__"}}}`, workflow.Object{"left": false}, noCalls(t))
	is.Equal(hops(trace), []string{"root d false->r", "root r ok->j", "root j done->__end__"})
	is.Equal(entry(t, trace, "root", "j"), workflow.TraceEntry{
		FrameID: "root", NodeID: "j", StepType: workflow.NodeJoin, ResolvedInput: workflow.Object{},
		Outcome: workflow.OutcomeDone, NextNodeID: workflow.End, Output: workflow.Object{}, StateChanges: workflow.Object{},
	})
	is.Equal(e.Output(), workflow.Object{"side": "right"})
}

func TestEndSetsTheWorkflowOutcome(t *testing.T) {
	for _, tc := range []struct {
		name, end string
		want      string
	}{
		{"explicit outcome", `{"end":{"outcome":"rejected"}}`, "rejected"},
		{"default outcome", `{"end":{}}`, "ok"},
		{"null payload", `{"end":null}`, "ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			e, trace := runDraft(t, `{"name":"w","start":"a","outcomes":["ok","rejected"],
				"state_schema":{"type":"object","properties":{"v":{}}},
				"output_schema":{"type":"object","properties":{"v":{}}},
				"steps":{"a":{"use":"wf.std.constant","input":[{"target":"value","value":1}],"output":[{"source":"value","target":"state.v"}]},
				  "stop":`+tc.end+`},
				"routes":{"a":{"ok":"stop"}}}`, nil, noCalls(t))
			is.Equal(e.Status(), workflow.StatusCompleted)
			is.Equal(e.Outcome(), tc.want)
			is.Equal(e.Output(), workflow.Object{"v": 1.0}) // the output is projected at any end
			is.Equal(hops(trace), []string{"root a ok->stop", "root stop " + tc.want + "->__end__"})
			is.Equal(trace[1].StepType, workflow.NodeEnd)
		})
	}
}

const foreachBody = `{"name":"w","start":"each",
	"input_schema":{"type":"object","properties":{"fruits":{"type":"array"}}},
	"state_schema":{"type":"object","properties":{"seen":{"type":"array","reducer":"wf.std.append"},"errors":{"type":"array"}}},
	"output_schema":{"type":"object","properties":{"seen":{},"errors":{}}},
	"steps":{"each":{"foreach":%s},
	  "call":{"use":"fx.default.anything","input":[
	    {"target":"item","path":"context.loop_item"},{"target":"index","path":"context.loop_index"},
	    {"target":"alias","path":"context.fruit"},{"target":"lineage","path":"context.lineage_id"},
	    {"target":"parent","path":"context.parent_lineage_id"}],
	   "output":[{"source":"item","target":"state.seen"}]}},
	"routes":{"each":{"loop":"call","done":"__end__"%s},"call":{"ok":"each","error":"each"}}}`

func foreachDoc(policy, extraRoutes string) string {
	return fmt.Sprintf(foreachBody, policy, extraRoutes)
}

func TestSerialForeachRunsOneItemAtATime(t *testing.T) {
	is := is.New(t)
	e := start(t, workflow.Program{Root: planOf(t, foreachDoc(`{"over":"input.fruits","as":"fruit"}`, ""))},
		workflow.Object{"fruits": []any{"apple", "fig", "kiwi"}})
	var trace []workflow.TraceEntry
	for {
		p := e.Advance()
		trace = append(trace, p.Trace...)
		if len(p.Calls) == 0 {
			break
		}
		is.Equal(len(p.Calls), 1) // serial: one item at a time
		c := p.Calls[0]
		is.NoErr(e.Complete(c.ID, echoing(c)))
	}
	is.Equal(e.Status(), workflow.StatusCompleted)
	is.Equal(hops(trace), []string{
		"root each loop->call", "root:each:0 call ok->each",
		"root each loop->call", "root:each:1 call ok->each",
		"root each loop->call", "root:each:2 call ok->each",
		"root each done->__end__",
	})
	is.Equal(trace[0].ResolvedInput, workflow.Object{"item": "apple", "index": 0.0})
	is.Equal(trace[2].ResolvedInput, workflow.Object{"item": "fig", "index": 1.0})
	// The item sees its item, index, alias and lineage.
	is.Equal(trace[3].ResolvedInput, workflow.Object{"item": "fig", "index": 1.0, "alias": "fig", "lineage": "root:each:1", "parent": "root"})
	is.Equal(trace[3].StateChanges, workflow.Object{"state.seen": []any{"apple", "fig"}}) // serial writes commit at once
	last := trace[len(trace)-1]
	is.Equal(last.StepType, workflow.NodeForeach)
	is.Equal(last.ResolvedInput, workflow.Object{"count": 3.0, "committed_items": 3.0, "failed_items": 0.0})
	is.Equal(e.Output(), workflow.Object{"seen": []any{"apple", "fig", "kiwi"}})
}

func TestForeachSourceMustBeAList(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input workflow.Object
		want  []string
		err   string
	}{
		{"empty list is done at once", workflow.Object{"fruits": []any{}}, []string{"root each done->__end__"}, ""},
		{"not a list", workflow.Object{"fruits": "apple"}, nil, `step "each": foreach source input.fruits is string, not an array`},
		{"missing", workflow.Object{}, nil, `step "each": foreach source input.fruits has no value`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			// No schema checks: the input schema would refuse a string first.
			e, err := workflow.NewExecution(workflow.Program{Root: planOf(t, foreachDoc(`{"over":"input.fruits","as":"fruit"}`, ""))}, tc.input, workflow.Options{})
			is.NoErr(err)
			trace := drive(t, e, echoing)
			if tc.err != "" {
				is.Equal(e.Err(), tc.err)
				return
			}
			is.Equal(hops(trace), tc.want)
			is.Equal(trace[0].ResolvedInput, workflow.Object{"count": 0.0, "committed_items": 0.0, "failed_items": 0.0})
		})
	}
}

func TestConcurrentForeachBoundsActiveItemsAndCommitsInItemOrder(t *testing.T) {
	for _, tc := range []struct {
		name      string
		policy    string
		items     int
		maxActive int
	}{
		{"max_active 2", `{"max_active":2,"max_outstanding":3}`, 7, 2},
		{"defaults", `{}`, 10, workflow.DefaultMaxActive},
		// More items than max_outstanding: finished items wait for the
		// barrier without holding up the rest.
		{"more items than max_outstanding", `{"max_active":2,"max_outstanding":2}`, 9, 2},
		{"more items than the default max_outstanding", `{}`, workflow.DefaultMaxOutstanding + 5, workflow.DefaultMaxActive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			doc := foreachDoc(`{"over":"input.fruits","as":"fruit","mode":"concurrent","concurrent":`+tc.policy+`}`, "")
			items := make([]any, tc.items)
			for i := range items {
				items[i] = float64(i)
			}
			e := start(t, workflow.Program{Root: planOf(t, doc)}, workflow.Object{"fruits": items})
			var trace []workflow.TraceEntry
			p := e.Advance()
			peak := 0
			for len(p.Calls) > 0 || len(e.Outstanding()) > 0 {
				trace = append(trace, p.Trace...)
				out := e.Outstanding()
				is.True(len(out) <= tc.maxActive) // never more than max_active items in flight
				peak = max(peak, len(out))
				// Answer the newest call first: completion order differs from item order.
				c := out[len(out)-1]
				is.NoErr(e.Complete(c.ID, echoing(c)))
				p = e.Advance()
			}
			trace = append(trace, p.Trace...)
			is.Equal(peak, tc.maxActive)
			is.Equal(e.Status(), workflow.StatusCompleted)
			is.Equal(e.Output()["seen"], items) // committed in item order

			admitted := 0
			for _, en := range trace {
				if en.NodeID == "each" && en.Outcome == workflow.OutcomeLoop {
					is.Equal(en.ResolvedInput["index"], float64(admitted))
					is.True(en.ResolvedInput["active_count"].(float64) <= float64(tc.maxActive))
					admitted++
				}
				if en.NodeID == "call" {
					// An item's write is buffered: its entry shows the written value.
					is.Equal(en.StateChanges, workflow.Object{"state.seen": en.Output["item"]})
				}
			}
			is.Equal(admitted, tc.items)
			done := trace[len(trace)-1]
			is.Equal(hops([]workflow.TraceEntry{done}), []string{"root each done->__end__"})
			is.Equal(done.ResolvedInput, workflow.Object{"count": float64(tc.items), "committed_items": float64(tc.items), "failed_items": 0.0})
			is.Equal(done.StateChanges, workflow.Object{"state.seen": items})
		})
	}
}

func TestConcurrentItemsReadTheStateBeforeTheLoopPlusTheirOwnWrites(t *testing.T) {
	for _, tc := range []struct {
		mode  string
		peeks []any
	}{
		{"serial", []any{1.0, 2.0, 3.0}},     // each item sees the ones before it
		{"concurrent", []any{1.0, 1.0, 1.0}}, // each item sees only its own write
	} {
		t.Run(tc.mode, func(t *testing.T) {
			is := is.New(t)
			e, _ := runDraft(t, `{"name":"w","start":"each",
				"state_schema":{"type":"object","properties":{
				  "count":{"type":"number","reducer":"wf.std.add"},
				  "peeks":{"type":"array","reducer":"wf.std.append"}}},
				"output_schema":{"type":"object","properties":{"count":{},"peeks":{}}},
				"steps":{"each":{"foreach":{"over":"input.items","as":"x","mode":"`+tc.mode+`"}},
				  "inc":{"use":"wf.std.constant","input":[{"target":"value","value":1}],"output":[{"source":"value","target":"state.count"}]},
				  "peek":{"use":"wf.std.constant","input":[{"target":"value","path":"state.count"}],"output":[{"source":"value","target":"state.peeks"}]}},
				"routes":{"each":{"loop":"inc","done":"__end__"},"inc":{"ok":"peek"},"peek":{"ok":"each"}}}`,
				workflow.Object{"items": []any{"a", "b", "c"}}, noCalls(t))
			is.Equal(e.Status(), workflow.StatusCompleted)
			is.Equal(e.Output(), workflow.Object{"count": 3.0, "peeks": tc.peeks})
		})
	}
}

func TestForeachItemErrorPolicies(t *testing.T) {
	fail := func(c workflow.Call) workflow.Result {
		if c.Input["item"] == "fig" {
			return workflow.Result{Err: errors.New("boom")}
		}
		return echoing(c)
	}
	for _, mode := range []string{"serial", "concurrent"} {
		for _, tc := range []struct {
			name, policy, routes string
			status, outcome      string
			seen, errors         any
			err                  string
		}{
			{name: "fail", policy: `"fail"`, status: workflow.StatusFailed,
				err: `foreach "each" item 1: step "call": boom`},
			{name: "default is fail", policy: `null`, status: workflow.StatusFailed,
				err: `foreach "each" item 1: step "call": boom`},
			{name: "skip", policy: `"skip"`, routes: `,"completed_with_errors":"__end__"`, status: workflow.StatusCompleted,
				outcome: workflow.OutcomeCompletedWithErrors, seen: []any{"apple", "kiwi"}},
			{name: "collect", policy: `{"action":"collect","collect_to":"state.errors"}`, routes: `,"completed_with_errors":"__end__"`,
				status: workflow.StatusCompleted, outcome: workflow.OutcomeCompletedWithErrors, seen: []any{"apple", "kiwi"},
				errors: []any{map[string]any{"index": 1.0, "frame_id": "root:each:1", "node_id": "call", "message": `step "call": boom`, "item": "fig"}}},
		} {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				is := is.New(t)
				doc := foreachDoc(`{"over":"input.fruits","as":"fruit","mode":"`+mode+`","item_error":`+tc.policy+`}`, tc.routes)
				e, trace := runDraft(t, doc, workflow.Object{"fruits": []any{"apple", "fig", "kiwi"}}, fail)
				is.Equal(e.Status(), tc.status)
				if tc.err != "" {
					is.Equal(e.Err(), tc.err)
					return
				}
				last := trace[len(trace)-1]
				is.Equal(last.NodeID, "each")
				is.Equal(last.Outcome, tc.outcome)
				is.Equal(last.ResolvedInput, workflow.Object{"count": 3.0, "committed_items": 2.0, "failed_items": 1.0})
				is.Equal(e.State()["seen"], tc.seen)
				is.Equal(e.State()["errors"], tc.errors)
				if tc.errors != nil {
					is.Equal(last.StateChanges["state.errors"], tc.errors)
				}
			})
		}
	}
}

func TestForeachBodyEndsByRoutingBackToItsForeach(t *testing.T) {
	for _, tc := range []struct {
		name, body, routes, path string
	}{
		{"an end step inside the body", `"stop":{"end":{}}`, `"each":{"loop":"stop","done":"__end__"}`, "steps.stop"},
		{"a route to __end__ inside the body", `"j":{"join":{}}`, `"each":{"loop":"j","done":"__end__"},"j":{"done":"__end__"}`, "routes.j.done"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			doc := `{"name":"w","start":"each",
				"steps":{"each":{"foreach":{"over":"input.items","as":"x"}},` + tc.body + `},
				"routes":{` + tc.routes + `}}`
			d, diags := parse(t, doc)
			is.Equal(diags, nil)
			var found []string
			for _, dg := range workflow.ValidateDraft(d, fixtures) {
				if dg.Code == "invalid_foreach_return" {
					found = append(found, dg.Path)
				}
			}
			is.Equal(found, []string{tc.path}) // refused where it stands
			p, err := workflow.Compile(d)
			is.True(err != nil) // and it does not compile
			is.Equal(p.Nodes, nil)
		})
	}
}

func TestNestedForeachSeesBothAliases(t *testing.T) {
	is := is.New(t)
	e, trace := runDraft(t, `{"name":"w","start":"rows",
		"input_schema":{"type":"object","properties":{"grid":{"type":"array"}}},
		"state_schema":{"type":"object","properties":{"cells":{"type":"array","reducer":"wf.std.append"}}},
		"output_schema":{"type":"object","properties":{"cells":{}}},
		"steps":{"rows":{"foreach":{"over":"input.grid","as":"row"}},
		  "cols":{"foreach":{"over":"context.row","as":"cell","mode":"concurrent"}},
		  "put":{"use":"wf.std.constant","input":[{"target":"value","expression":{"kind":"object","fields":{
		    "row":{"kind":"path","path":"context.row"},"cell":{"kind":"path","path":"context.cell"},
		    "item":{"kind":"path","path":"context.loop_item"},"index":{"kind":"path","path":"context.loop_index"}}}}],
		   "output":[{"source":"value","target":"state.cells"}]}},
		"routes":{"rows":{"loop":"cols","done":"__end__"},"cols":{"loop":"put","done":"rows"},"put":{"ok":"cols"}}}`,
		workflow.Object{"grid": []any{[]any{"a", "b"}, []any{"c"}}}, noCalls(t))
	is.Equal(e.Status(), workflow.StatusCompleted)
	is.Equal(e.Output()["cells"], []any{
		map[string]any{"row": []any{"a", "b"}, "cell": "a", "item": "a", "index": 0.0},
		map[string]any{"row": []any{"a", "b"}, "cell": "b", "item": "b", "index": 1.0},
		map[string]any{"row": []any{"c"}, "cell": "c", "item": "c", "index": 0.0},
	})
	is.Equal(entry(t, trace, "root:rows:0:cols:1", "put").ResolvedInput["value"].(map[string]any)["cell"], "b")
}

func TestACapabilityRoutesOnItsOwnOutcomes(t *testing.T) {
	for _, tc := range []struct {
		outcome, grade string
		want           []string
	}{
		{"pass", "A", []string{"root g pass->__end__"}},
		// A declared outcome other than a tool's "error" commits its output too.
		{"fail", "F", []string{"root g fail->retake", "root retake failed->__end__"}},
	} {
		t.Run(tc.outcome, func(t *testing.T) {
			is := is.New(t)
			e, trace := runDraft(t, `{"name":"w","start":"g","outcomes":["ok","failed"],
				"state_schema":{"type":"object","properties":{"grade":{"type":"string"}}},
				"output_schema":{"type":"object","properties":{"grade":{}}},
				"steps":{"g":{"use":"fx.default.grade","input":[{"target":"score","value":71}],"output":[{"source":"grade","target":"state.grade"}]},
				  "retake":{"end":{"outcome":"failed"}}},
				"routes":{"g":{"pass":"__end__","fail":"retake"}}}`, nil,
				func(c workflow.Call) workflow.Result {
					return workflow.Result{Outcome: tc.outcome, Output: workflow.Object{"grade": tc.grade}}
				})
			is.Equal(e.Status(), workflow.StatusCompleted)
			is.Equal(hops(trace), tc.want)
			is.Equal(trace[0].ResolvedInput, workflow.Object{"score": 71.0})
			is.Equal(trace[0].StateChanges, workflow.Object{"state.grade": tc.grade})
			is.Equal(e.Output(), workflow.Object{"grade": tc.grade})
		})
	}
}

func TestCancelAndStopEndTheExecution(t *testing.T) {
	for _, tc := range []struct {
		name   string
		end    func(*workflow.Execution)
		status string
		err    string
	}{
		{"cancel", func(e *workflow.Execution) { e.Cancel("user asked") }, workflow.StatusCancelled, "user asked"},
		{"stop", func(e *workflow.Execution) { e.Stop(errors.New("run deadline exceeded")) }, workflow.StatusFailed, "run deadline exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			e := start(t, workflow.Program{Root: planOf(t, useDraft)}, workflow.Object{"who": "ada"})
			p := e.Advance()
			is.Equal(len(p.Calls), 1)
			tc.end(e)
			is.Equal(e.Status(), tc.status)
			is.Equal(e.Err(), tc.err)
			is.Equal(len(e.Outstanding()), 0)                              // the calls are withdrawn
			is.True(e.Complete(p.Calls[0].ID, echoing(p.Calls[0])) != nil) // a late answer is refused
			is.Equal(len(e.Advance().Trace), 0)
			is.Equal(e.State(), workflow.Object{})
		})
	}
}
