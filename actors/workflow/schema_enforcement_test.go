package workflow_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

func TestSchemaViolationsFailTheRun(t *testing.T) {
	const echoStep = `{"name":"w","start":"call",
		"input_schema":{"type":"object","properties":{"who":{}}},
		"state_schema":{"type":"object","properties":{"said":{"type":"string"}}},
		"output_schema":{"type":"object","properties":{"said":{"type":"string"}},"required":["said"]},
		"steps":{"call":{"use":"fx.default.echo","input":[{"target":"text","path":"input.who"}],"output":[{"source":"text","target":"state.said"}]}},
		"routes":{"call":{"ok":"__end__","error":"__end__"}}}`
	answer := func(out workflow.Object) func(workflow.Call) workflow.Result {
		return func(workflow.Call) workflow.Result { return workflow.Result{Outcome: "ok", Output: out} }
	}
	for _, tc := range []struct {
		name   string
		doc    string
		input  workflow.Object
		answer func(workflow.Call) workflow.Result
		err    []string // the step, the path and the rule
	}{
		{"step input vs the capability's input schema", echoStep, workflow.Object{"who": 5.0}, answer(nil),
			[]string{`step "call" input: `, "at /text: ", "type: "}},
		{"required step input", echoStep, workflow.Object{}, answer(nil),
			[]string{`step "call" input: `, "at /text: ", "required: "}},
		{"step output vs the capability's output schema", echoStep, workflow.Object{"who": "ada"}, answer(workflow.Object{"text": 5.0}),
			[]string{`step "call" output: `, "at /text: ", "type: "}},
		{"required step output", echoStep, workflow.Object{"who": "ada"}, answer(workflow.Object{}),
			[]string{`step "call" output: `, "at /text: ", "required: "}},
		{"workflow output", echoStep, workflow.Object{"who": "ada"},
			func(workflow.Call) workflow.Result {
				return workflow.Result{Outcome: "error", Output: workflow.Object{"content": []any{}}}
			},
			[]string{"workflow output: ", "at /said: ", "required: "}},
		{"state after commit", `{"name":"w","start":"a",
			"state_schema":{"type":"object","properties":{"count":{"type":"integer"}}},
			"steps":{"a":{"use":"wf.std.constant","input":[{"target":"value","value":"x"}],"output":[{"source":"value","target":"state.count"}]}},
			"routes":{"a":{"ok":"__end__"}}}`, nil, noCalls(t),
			[]string{`step "a": `, "state.count: at (root): ", "type: "}},
		{"nested state after commit", `{"name":"w","start":"a",
			"state_schema":{"type":"object","properties":{"stats":{"type":"object","properties":{"n":{"type":"integer","minimum":0}}}}},
			"steps":{"a":{"use":"wf.std.constant","input":[{"target":"value","value":-1}],"output":[{"source":"value","target":"state.stats.n"}]}},
			"routes":{"a":{"ok":"__end__"}}}`, nil, noCalls(t),
			[]string{`step "a": `, "state.stats: at /n: ", "minimum: "}},
		{"state at a concurrent barrier", `{"name":"w","start":"each",
			"state_schema":{"type":"object","properties":{"log":{"type":"array","maxItems":2,"reducer":"wf.std.append"}}},
			"steps":{"each":{"foreach":{"over":"input.items","as":"x","mode":"concurrent"}},
			  "put":{"use":"wf.std.constant","input":[{"target":"value","path":"context.x"}],"output":[{"source":"value","target":"state.log"}]}},
			"routes":{"each":{"loop":"put","done":"__end__"},"put":{"ok":"each"}}}`, workflow.Object{"items": []any{1.0, 2.0, 3.0}}, noCalls(t),
			[]string{`foreach "each" item 2: `, "state.log: at (root): ", "maxItems: "}},
		{"interrupt request", `{"name":"w","start":"ask",
			"steps":{"ask":{"interrupt":{"kind":"k","request":[{"target":"q","value":1}],
			  "request_schema":{"type":"object","properties":{"q":{"type":"string"}}}}}},
			"routes":{"ask":{"submitted":"__end__"}}}`, nil, noCalls(t),
			[]string{`step "ask" request: `, "at /q: ", "type: "}},
		{"subgraph step input", `{"name":"w","start":"sub",
			"steps":{"sub":{"subgraph":{"workflow":{"artifact_id":"child","version":1},"input":[{"target":"x","value":"one"}],
			  "input_schema":{"type":"object","properties":{"x":{"type":"number"}}}}}},
			"routes":{"sub":{"ok":"__end__"}}}`, nil, noCalls(t),
			[]string{`step "sub" input: `, "at /x: ", "type: "}},
		{"subgraph step output", `{"name":"w","start":"sub",
			"steps":{"sub":{"subgraph":{"workflow":{"artifact_id":"child","version":1},"input":[{"target":"x","value":1}],
			  "output_schema":{"type":"object","properties":{"y":{"type":"string"}}}}}},
			"routes":{"sub":{"ok":"__end__"}}}`, nil, noCalls(t),
			[]string{`step "sub" output: `, "at /y: ", "type: "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t, childProgram(t, tc.doc, childDraft), tc.input)
			drive(t, e, tc.answer)
			errHas(t, e, tc.err...)
		})
	}
}

func TestWorkflowInputIsChecked(t *testing.T) {
	is := is.New(t)
	_, err := workflow.NewExecution(workflow.Program{Root: planOf(t, useDraft)}, workflow.Object{"who": 1.0}, strict)
	is.True(err != nil)
	is.Equal(err.Error(), "workflow input: at /who: type: expected string, got number")
}

func TestWithoutAValidatorNoSchemaIsChecked(t *testing.T) {
	is := is.New(t)
	e, err := workflow.NewExecution(workflow.Program{Root: planOf(t, useDraft)}, workflow.Object{"who": 1.0}, workflow.Options{Capability: fixtures})
	is.NoErr(err)
	drive(t, e, func(workflow.Call) workflow.Result { return workflow.Result{Output: workflow.Object{"text": 2.0}} })
	is.Equal(e.Status(), workflow.StatusCompleted)
	is.Equal(e.Output(), workflow.Object{"said": 2.0})
}

func TestTheStepBudgetEndsARunawayLoop(t *testing.T) {
	const runaway = `{"name":"w","start":"a","steps":{
		"a":{"use":"wf.std.truthy","input":[{"target":"value","value":true}]}},
		"routes":{"a":{"truthy":"a","falsey":"__end__"}}}`
	for _, tc := range []struct {
		name string
		max  int
		want int
	}{
		{"default budget", 0, workflow.DefaultMaxSteps},
		{"own budget", 25, 25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			e, err := workflow.NewExecution(workflow.Program{Root: planOf(t, runaway)}, nil, workflow.Options{MaxSteps: tc.max})
			is.NoErr(err)
			trace := drive(t, e, noCalls(t))
			is.Equal(e.Steps(), tc.want)
			is.Equal(len(trace), tc.want)
			errHas(t, e, `step budget exhausted: `, `steps executed, the next would be "a"`)
		})
	}
	is.New(t).Equal(workflow.DefaultMaxSteps, 10000)
}

func TestTheStepBudgetIsNotAnItemError(t *testing.T) {
	is := is.New(t)
	// Each item loops forever; skip does not turn the budget into a skipped item.
	e, err := workflow.NewExecution(workflow.Program{Root: planOf(t, `{"name":"w","start":"each",
		"steps":{"each":{"foreach":{"over":"input.items","as":"x","item_error":"skip"}},
		  "spin":{"use":"wf.std.truthy","input":[{"target":"value","value":true}]}},
		"routes":{"each":{"loop":"spin","done":"__end__","completed_with_errors":"__end__"},"spin":{"truthy":"spin","falsey":"each"}}}`)},
		workflow.Object{"items": []any{1.0, 2.0}}, workflow.Options{MaxSteps: 40})
	is.NoErr(err)
	drive(t, e, noCalls(t))
	errHas(t, e, "step budget exhausted")
	is.Equal(e.Steps(), 40)
}
