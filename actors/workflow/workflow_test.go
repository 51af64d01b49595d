package workflow_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/workflow"
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

func counterPlan(t *testing.T) workflow.Plan {
	is := is.New(t)
	draft, hints := workflow.Scaffold(counter, workflow.ScaffoldOptions{Name: "counter_workflow"})
	is.Equal(hints.Confidence, "high")
	is.Equal(hints.OutputMap, map[string]string{"count": "state.count"})
	is.Equal(len(workflow.ValidateDraft(draft, lookup)), 0) // scaffold is valid
	plan, err := workflow.Compile(draft)
	is.NoErr(err)
	return plan
}

func TestScaffoldedWorkflowReturnsTheToolOutput(t *testing.T) {
	is := is.New(t)
	plan := counterPlan(t)
	is.Equal(plan.Capabilities(), []string{"fixture.default.counter", workflow.RuntimeError})

	exec, err := workflow.NewExecution(plan, nil)
	is.NoErr(err)
	call, ok, err := exec.Next()
	is.NoErr(err)
	is.True(ok)
	is.Equal(call.Capability, "fixture.default.counter")
	is.Equal(call.Input, workflow.Object{})

	entry, err := exec.Complete(call, workflow.OutcomeOK, workflow.Object{"count": float64(1)})
	is.NoErr(err)
	is.Equal(entry.NextNodeID, workflow.End)
	is.Equal(entry.StateChanges, workflow.Object{"state.count": float64(1)})
	_, ok, err = exec.Next()
	is.NoErr(err)
	is.True(!ok)
	is.True(exec.Finished())
	is.Equal(exec.Outcome(), workflow.OutcomeOK)
	out, err := exec.Output()
	is.NoErr(err)
	is.Equal(out, workflow.Object{"count": float64(1)})
}

func TestToolErrorRoutesToRuntimeErrorThatFailsTheRun(t *testing.T) {
	is := is.New(t)
	exec, err := workflow.NewExecution(counterPlan(t), nil)
	is.NoErr(err)
	call, _, err := exec.Next()
	is.NoErr(err)
	_, err = exec.Complete(call, workflow.OutcomeError, workflow.Object{"content": []any{}})
	is.NoErr(err)

	call, ok, err := exec.Next()
	is.NoErr(err)
	is.True(ok)
	is.Equal(call.Capability, workflow.RuntimeError)
	run, ok := workflow.Builtin(call.Capability)
	is.True(ok)
	_, _, err = run(call.Input)
	is.Equal(err.Error(), "Capability call failed")
}

func TestUndeclaredOutcomeIsAnError(t *testing.T) {
	is := is.New(t)
	exec, err := workflow.NewExecution(counterPlan(t), nil)
	is.NoErr(err)
	call, _, err := exec.Next()
	is.NoErr(err)
	_, err = exec.Complete(call, "maybe", nil)
	is.True(err != nil) // no route for "maybe"
}

func TestValidateDraftReportsUnknownCapabilityAndMissingRoutes(t *testing.T) {
	is := is.New(t)
	draft := workflow.Draft{
		Name: "broken", Start: "a", Outcomes: []string{"ok"},
		Steps: map[string]workflow.DraftStep{
			"a": {Use: "fixture.default.counter"},
			"b": {Use: "nope.nope.nope"},
		},
		Routes: map[string]map[string]string{"a": {"ok": "missing"}},
	}
	codes := map[string]bool{}
	for _, d := range workflow.ValidateDraft(draft, lookup) {
		codes[d.Code] = true
	}
	is.True(codes["unknown_node_def"])         // b uses an unknown capability
	is.True(codes["missing_outcome_edge"])     // a.error is not routed
	is.True(codes["unknown_edge_destination"]) // a.ok goes nowhere
}

func TestInputBindingsReadInputStateAndValues(t *testing.T) {
	is := is.New(t)
	plan := workflow.Plan{
		Name: "echo", Start: "first", Outcomes: []string{"ok"},
		Nodes: []workflow.Node{
			{ID: "first", Type: workflow.NodeCall, Node: "x.y.echo",
				Input:  []workflow.InputBinding{{Path: "input.text", Target: "message"}},
				Output: []workflow.OutputBinding{{Source: "message", Target: "state.said"}}},
			{ID: "second", Type: workflow.NodeCall, Node: "x.y.echo",
				Input: []workflow.InputBinding{{Path: "state.said", Target: "message"}, {Value: []byte(`3`), Target: "n"}}},
			{ID: "done", Type: workflow.NodeEnd, Outcome: "ok"},
		},
		Edges: []workflow.Edge{{From: "first", Outcome: "ok", To: "second"}, {From: "second", Outcome: "ok", To: "done"}},
	}
	exec, err := workflow.NewExecution(plan, workflow.Object{"text": "hi"})
	is.NoErr(err)
	call, _, err := exec.Next()
	is.NoErr(err)
	is.Equal(call.Input, workflow.Object{"message": "hi"})
	_, err = exec.Complete(call, "ok", workflow.Object{"message": "hi"})
	is.NoErr(err)
	call, _, err = exec.Next()
	is.NoErr(err)
	is.Equal(call.Input, workflow.Object{"message": "hi", "n": float64(3)})
	_, err = exec.Complete(call, "ok", nil)
	is.NoErr(err)
	_, ok, err := exec.Next()
	is.NoErr(err)
	is.True(!ok)
	is.Equal(len(exec.Trace()), 3) // two calls and the end step
}

func TestMissingInputPathFailsTheStep(t *testing.T) {
	is := is.New(t)
	plan := workflow.Plan{
		Name: "echo", Start: "first",
		Nodes: []workflow.Node{{ID: "first", Type: workflow.NodeCall, Node: "x.y.echo",
			Input: []workflow.InputBinding{{Path: "input.text", Target: "message"}}}},
		Edges: []workflow.Edge{{From: "first", Outcome: "ok", To: workflow.End}},
	}
	exec, err := workflow.NewExecution(plan, nil)
	is.NoErr(err)
	_, _, err = exec.Next()
	is.True(err != nil) // input.text is absent
}
