package workflow_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/schema"
)

var counter = catalog.Tool{
	Name:         "counter",
	InputSchema:  catalog.Object{"type": "object"},
	OutputSchema: catalog.Object{"type": "object", "properties": catalog.Object{"count": catalog.Object{"type": "integer"}}},
}.Capability("fixture.default")

func lookup(name string) (catalog.Capability, bool) {
	if name == counter.Name {
		return counter, true
	}
	for _, c := range workflow.Builtins() {
		if c.Name == name {
			return c, true
		}
	}
	return catalog.Capability{}, false
}

// options enforce every schema, as the run actor does.
var options = workflow.Options{Capability: lookup, Validate: schema.Default.Validate}

// draftOf decodes a draft written as JSON, failing on any diagnostic.
func draftOf(t *testing.T, doc string) workflow.Draft {
	t.Helper()
	is := is.NewRelaxed(t)
	var obj workflow.Object
	is.NoErr(json.Unmarshal([]byte(doc), &obj))
	d, diags := workflow.ParseDraft(obj)
	is.Equal(diags, nil)
	return d
}

// compile validates and compiles a draft.
func compile(t *testing.T, doc string) workflow.Plan {
	t.Helper()
	is := is.New(t)
	d := draftOf(t, doc)
	is.Equal(workflow.Blocking(workflow.ValidateDraft(d, lookup)), nil) // warnings (an error routed to the end) do not block
	p, err := workflow.Compile(d)
	is.NoErr(err)
	return p
}

// drive runs an execution to its end, answering each call with answer,
// and returns every trace entry.
func drive(t *testing.T, e *workflow.Execution, answer func(workflow.Call) workflow.Result) []workflow.TraceEntry {
	t.Helper()
	var trace []workflow.TraceEntry
	for range 10000 {
		p := e.Advance()
		trace = append(trace, p.Trace...)
		if len(p.Calls) == 0 {
			return trace
		}
		for _, c := range p.Calls {
			is.New(t).NoErr(e.Complete(c.ID, answer(c)))
		}
	}
	t.Fatal("execution did not settle")
	return nil
}

func counting() func(workflow.Call) workflow.Result {
	n := 0
	return func(workflow.Call) workflow.Result {
		n++
		return workflow.Result{Outcome: "ok", Output: workflow.Object{"count": float64(n)}}
	}
}

func TestScaffoldedWorkflowReturnsTheToolOutput(t *testing.T) {
	is := is.New(t)
	draft, hints := workflow.Scaffold(counter, workflow.ScaffoldOptions{Name: "counter_workflow"})
	is.Equal(hints.Confidence, "high")
	is.Equal(hints.OutputMap, map[string]string{"count": "state.count"})
	is.Equal(workflow.ValidateDraft(draft, lookup), nil)
	plan, err := workflow.Compile(draft)
	is.NoErr(err)
	is.Equal(plan.Capabilities(), []string{"fixture.default.counter", workflow.RuntimeError})

	e, err := workflow.NewExecution(workflow.Program{Root: plan}, nil, options)
	is.NoErr(err)
	trace := drive(t, e, counting())
	is.Equal(e.Status(), workflow.StatusCompleted)
	is.Equal(e.Outcome(), workflow.OutcomeOK)
	is.Equal(e.Output(), workflow.Object{"count": float64(1)})
	is.Equal(len(trace), 1)
	is.Equal(trace[0].StateChanges, workflow.Object{"state.count": float64(1)})
}

func TestToolErrorRoutesToRuntimeErrorThatFailsTheRun(t *testing.T) {
	is := is.New(t)
	draft, _ := workflow.Scaffold(counter, workflow.ScaffoldOptions{Name: "w"})
	plan, err := workflow.Compile(draft)
	is.NoErr(err)
	is.Equal(workflow.ValidateDraft(draft, lookup), nil) // a scaffold routes error to a failing step: no warning
	e, err := workflow.NewExecution(workflow.Program{Root: plan}, nil, options)
	is.NoErr(err)
	trace := drive(t, e, func(workflow.Call) workflow.Result {
		return workflow.Result{Outcome: "error", Output: workflow.Object{"content": []any{
			map[string]any{"type": "text", "text": "net::ERR_NAME_NOT_RESOLVED"},
			map[string]any{"type": "image", "data": "iVBO", "mimeType": "image/png"},
			map[string]any{"type": "text", "text": "at https://nowhere.invalid/"}}}}
	})
	is.Equal(e.Status(), workflow.StatusFailed)
	is.Equal(e.Err(), "step \"tool_error\": counter failed: net::ERR_NAME_NOT_RESOLVED\nat https://nowhere.invalid/") // the tool's own words
	is.Equal(len(trace), 1)
	is.Equal(trace[0].Outcome, "error")
	is.Equal(trace[0].Error, "net::ERR_NAME_NOT_RESOLVED\nat https://nowhere.invalid/") // the call step's error, in the trace
}

func TestAToolErrorWithoutTextSaysSo(t *testing.T) {
	is := is.New(t)
	draft, _ := workflow.Scaffold(counter, workflow.ScaffoldOptions{Name: "w"})
	plan, err := workflow.Compile(draft)
	is.NoErr(err)
	e, err := workflow.NewExecution(workflow.Program{Root: plan}, nil, options)
	is.NoErr(err)
	drive(t, e, func(workflow.Call) workflow.Result {
		return workflow.Result{Outcome: "error", Output: workflow.Object{"content": []any{}}}
	})
	is.Equal(e.Err(), `step "tool_error": counter failed: the tool reported an error and said nothing more`)
}

func TestScaffoldKeepsOptionalInputs(t *testing.T) {
	is := is.New(t)
	tool := catalog.Tool{Name: "long", InputSchema: catalog.Object{"type": "object",
		"properties": catalog.Object{"duration": catalog.Object{"type": "number"}, "steps": catalog.Object{"type": "number"}},
		"required":   []any{"duration"}, "additionalProperties": false}}.Capability("everything.default")
	draft, _ := workflow.Scaffold(tool, workflow.ScaffoldOptions{Name: "w"})
	is.Equal(len(draft.Steps["call"].Input), 2)
	is.Equal(draft.InputSchema["required"], []any{"duration"})
	// The tool's input schema is closed, so the workflow's is too.
	is.True(schema.Default.Validate(draft.InputSchema, map[string]any{"duration": 4.0, "bogus": 1.0}) != nil)
	plan, err := workflow.Compile(draft)
	is.NoErr(err)
	for _, tc := range []struct {
		input, want workflow.Object
	}{
		{workflow.Object{"duration": 4.0, "steps": 4.0}, workflow.Object{"duration": 4.0, "steps": 4.0}},
		{workflow.Object{"duration": 4.0}, workflow.Object{"duration": 4.0}}, // omitted stays omitted
	} {
		e, err := workflow.NewExecution(workflow.Program{Root: plan}, tc.input, workflow.Options{})
		is.NoErr(err)
		p := e.Advance()
		is.Equal(len(p.Calls), 1)
		is.Equal(p.Calls[0].Input, tc.want)
	}
}

func TestAReducerAppendsWhatTwoStepsWrite(t *testing.T) {
	is := is.New(t)
	plan := compile(t, `{"name":"w","start":"a",
		"state_schema":{"type":"object","properties":{"log":{"type":"array","reducer":"wf.std.append"}}},
		"output_schema":{"type":"object","properties":{"log":{}}},
		"steps":{
		  "a":{"use":"wf.std.constant","input":[{"target":"value","value":"first"}],"output":[{"source":"value","target":"state.log"}]},
		  "b":{"use":"wf.std.constant","input":[{"target":"value","value":"second"}],"output":[{"source":"value","target":"state.log"}]}},
		"routes":{"a":{"ok":"b"},"b":{"ok":"__end__"}}}`)
	e, err := workflow.NewExecution(workflow.Program{Root: plan}, nil, options)
	is.NoErr(err)
	drive(t, e, nil)
	is.Equal(e.Status(), workflow.StatusCompleted)
	is.Equal(e.Output(), workflow.Object{"log": []any{"first", "second"}})
}

func TestDecisionsRouteOnConditions(t *testing.T) {
	for _, tc := range []struct {
		name, step string
		input      workflow.Object
		want       string
	}{
		{"when true", `{"when":{"if":{"op":"gt","left":{"path":"input.n"},"right":{"value":3}},"then":"big","otherwise":"small"}}`, workflow.Object{"n": 5.0}, "big"},
		{"when false", `{"when":{"if":{"op":"gt","left":{"path":"input.n"},"right":{"value":3}},"then":"big","otherwise":"small"}}`, workflow.Object{"n": 1.0}, "small"},
		{"choose second clause", `{"choose":{"clauses":[{"if":{"op":"eq","left":{"path":"input.n"},"right":{"value":1}},"then":"small"},{"if":{"op":"exists","path":"input.n"},"then":"big"}],"default":"small"}}`, workflow.Object{"n": 7.0}, "big"},
		{"match case", `{"match":{"value":"input.n","cases":[{"equals":2,"then":"small"},{"equals":7,"then":"big"}]}}`, workflow.Object{"n": 7.0}, "big"},
		{"match default", `{"match":{"value":"input.n","cases":[{"equals":2,"then":"big"}],"default":"small"}}`, workflow.Object{"n": 7.0}, "small"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			plan := compile(t, `{"name":"w","start":"decide",
				"input_schema":{"type":"object","properties":{"n":{"type":"number"}}},
				"state_schema":{"type":"object","properties":{"size":{"type":"string"}}},
				"output_schema":{"type":"object","properties":{"size":{"type":"string"}}},
				"steps":{"decide":`+tc.step+`,
				  "big":{"use":"wf.std.constant","input":[{"target":"value","value":"big"}],"output":[{"source":"value","target":"state.size"}]},
				  "small":{"use":"wf.std.constant","input":[{"target":"value","value":"small"}],"output":[{"source":"value","target":"state.size"}]}},
				"routes":{"big":{"ok":"__end__"},"small":{"ok":"__end__"}}}`)
			e, err := workflow.NewExecution(workflow.Program{Root: plan}, tc.input, options)
			is.NoErr(err)
			trace := drive(t, e, nil)
			is.Equal(e.Output(), workflow.Object{"size": tc.want})
			is.Equal(trace[0].StepType, workflow.NodeCondition)
		})
	}
}

const foreachDraft = `{"name":"w","start":"each",
	"input_schema":{"type":"object","properties":{"items":{"type":"array"}}},
	"state_schema":{"type":"object","properties":{"seen":{"type":"array","reducer":"wf.std.append"},"errors":{"type":"array"}}},
	"output_schema":{"type":"object","properties":{"seen":{},"errors":{}}},
	"steps":{"each":{"foreach":{"over":"input.items","as":"thing","mode":"%s","item_error":%s}},
	  "call":{"use":"fixture.default.counter","input":[{"target":"item","path":"context.thing"}],"output":[{"source":"count","target":"state.seen"}]}},
	"routes":{"each":{"loop":"call","done":"__end__","completed_with_errors":"__end__"},"call":{"ok":"each","error":"each"}}}`

func TestConcurrentForeachCommitsInItemOrderAndRunsCallsAtOnce(t *testing.T) {
	is := is.New(t)
	plan := compile(t, fmt.Sprintf(foreachDraft, "concurrent", `"fail"`))
	items := make([]any, 10)
	for i := range items {
		items[i] = float64(i)
	}
	e, err := workflow.NewExecution(workflow.Program{Root: plan}, workflow.Object{"items": items}, options)
	is.NoErr(err)
	p := e.Advance()
	is.Equal(len(p.Calls), workflow.DefaultMaxActive) // four items in flight at once
	// Answer in reverse order: the barrier still commits in item order.
	for len(p.Calls) > 0 {
		for i := len(p.Calls) - 1; i >= 0; i-- {
			c := p.Calls[i]
			is.NoErr(e.Complete(c.ID, workflow.Result{Outcome: "ok", Output: workflow.Object{"count": c.Input["item"].(float64) * 10}}))
		}
		p = e.Advance()
	}
	is.Equal(e.Status(), workflow.StatusCompleted)
	want := make([]any, 10)
	for i := range want {
		want[i] = float64(i * 10)
	}
	is.Equal(e.Output()["seen"], want)
}

func TestForeachItemErrorsAreCollected(t *testing.T) {
	is := is.New(t)
	plan := compile(t, fmt.Sprintf(foreachDraft, "serial", `{"action":"collect","collect_to":"state.errors"}`))
	e, err := workflow.NewExecution(workflow.Program{Root: plan}, workflow.Object{"items": []any{1.0, 2.0, 3.0}}, options)
	is.NoErr(err)
	drive(t, e, func(c workflow.Call) workflow.Result {
		if c.Input["item"] == 2.0 {
			return workflow.Result{Err: errors.New("boom")}
		}
		return workflow.Result{Outcome: "ok", Output: workflow.Object{"count": c.Input["item"]}}
	})
	is.Equal(e.Status(), workflow.StatusCompleted)
	out := e.Output()
	is.Equal(out["seen"], []any{1.0, 3.0})
	errs := out["errors"].([]any)
	is.Equal(len(errs), 1)
	is.Equal(errs[0].(map[string]any)["index"], 1.0)
}

func TestInterruptPausesAndResumeContinues(t *testing.T) {
	is := is.New(t)
	plan := compile(t, `{"name":"w","start":"ask","outcomes":["ok","rejected"],
		"state_schema":{"type":"object","properties":{"approved":{"type":"boolean"}}},
		"output_schema":{"type":"object","properties":{"approved":{}}},
		"steps":{"ask":{"interrupt":{"kind":"approval","request":[{"target":"message","value":"ok?"}],
		   "resume":[{"source":"approved","target":"state.approved"}],
		   "resume_schema":{"type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"]},
		   "outcomes":["submitted","rejected"]}},
		  "no":{"end":{"outcome":"rejected"}}},
		"routes":{"ask":{"submitted":"__end__","rejected":"no"}}}`)
	e, err := workflow.NewExecution(workflow.Program{Root: plan}, nil, options)
	is.NoErr(err)
	trace := drive(t, e, nil)
	is.Equal(e.Status(), workflow.StatusInterrupted)
	in := e.Interrupt()
	is.Equal(in.ID, "interrupt:ask")
	is.Equal(in.Payload, workflow.Object{"message": "ok?"})
	is.True(in.Typed)
	is.Equal(trace[0].Outcome, workflow.OutcomeInterrupt)

	// A payload that breaks the resume schema is refused and changes nothing.
	err = e.Resume("submitted", workflow.Object{"approved": "yes"})
	is.True(errors.Is(err, workflow.ErrResume))
	is.Equal(e.Status(), workflow.StatusInterrupted)

	// The snapshot survives a round trip through JSON, as a checkpoint does.
	data, err := json.Marshal(e.Snapshot())
	is.NoErr(err)
	var snap workflow.Snapshot
	is.NoErr(json.Unmarshal(data, &snap))
	e, err = workflow.Restore(workflow.Program{Root: plan}, snap, options)
	is.NoErr(err)
	is.NoErr(e.Resume("submitted", workflow.Object{"approved": true}))
	drive(t, e, nil)
	is.Equal(e.Status(), workflow.StatusCompleted)
	is.Equal(e.Output(), workflow.Object{"approved": true})
}

func TestSubgraphRunsAChildAndRoutesOnItsOutcome(t *testing.T) {
	is := is.New(t)
	child := compile(t, `{"name":"child","start":"c",
		"input_schema":{"type":"object","properties":{"x":{}}},
		"state_schema":{"type":"object","properties":{"y":{}}},
		"output_schema":{"type":"object","properties":{"y":{}}},
		"steps":{"c":{"use":"wf.std.constant","input":[{"target":"value","path":"input.x"}],"output":[{"source":"value","target":"state.y"}]}},
		"routes":{"c":{"ok":"__end__"}}}`)
	parent := compile(t, `{"name":"parent","start":"sub",
		"state_schema":{"type":"object","properties":{"got":{}}},
		"output_schema":{"type":"object","properties":{"got":{}}},
		"steps":{"sub":{"subgraph":{"workflow":{"artifact_id":"child","version":1},
		   "input":[{"target":"x","value":42}],"output":[{"source":"y","target":"state.got"}]}}},
		"routes":{"sub":{"ok":"__end__"}}}`)
	one := 1
	id := "child"
	prog := workflow.Program{Root: parent, Children: map[string]workflow.Plan{workflow.WorkflowRef{ArtifactID: &id, Version: &one}.Key(): child}}
	e, err := workflow.NewExecution(prog, nil, options)
	is.NoErr(err)
	trace := drive(t, e, nil)
	is.Equal(e.Status(), workflow.StatusCompleted)
	is.Equal(e.Output(), workflow.Object{"got": 42.0})
	is.Equal(trace[len(trace)-1].StepType, workflow.NodeSubgraph)
}

func TestALoopWithNoExitIsRefusedAndARunawayLoopHitsTheBudget(t *testing.T) {
	is := is.New(t)
	d := draftOf(t, `{"name":"w","start":"a","steps":{"a":{"use":"wf.std.constant","input":[{"target":"value","value":1}]}},"routes":{"a":{"ok":"a"}}}`)
	codes := map[string]bool{}
	for _, dg := range workflow.ValidateDraft(d, lookup) {
		codes[dg.Code] = true
	}
	is.True(codes["loop_without_exit"])

	// A loop that could exit but never does runs into the step budget.
	plan := compile(t, `{"name":"w","start":"a","steps":{
		"a":{"use":"wf.std.truthy","input":[{"target":"value","value":true}]}},
		"routes":{"a":{"truthy":"a","falsey":"__end__"}}}`)
	e, err := workflow.NewExecution(workflow.Program{Root: plan}, nil, workflow.Options{MaxSteps: 50})
	is.NoErr(err)
	drive(t, e, nil)
	is.Equal(e.Status(), workflow.StatusFailed)
	is.Equal(e.Steps(), 50)
}
