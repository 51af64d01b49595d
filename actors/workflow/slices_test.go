package workflow_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// spin is a workflow whose only step is a when routing to itself: it
// never waits on a call, and only its step budget ends it.
const spin = `{"name":"spin","start":"spin","steps":{
	"spin":{"when":{"if":{"op":"eq","left":{"value":1},"right":{"value":1}},"then":"spin"}}}}`

// driveSliced is drive in slices of n steps: it advances until the
// execution neither has frames ready nor waits on a call, restoring it
// from its snapshot after every slice, as a run halted between two
// slices is recovered; it returns the trace, the number of slices and
// the execution as it ends.
func driveSliced(t *testing.T, prog workflow.Program, e *workflow.Execution, n int, answer func(workflow.Call) workflow.Result) ([]workflow.TraceEntry, int, *workflow.Execution) {
	t.Helper()
	var trace []workflow.TraceEntry
	for slices := 1; slices <= 10000; slices++ {
		before := e.Steps()
		p := e.AdvanceSteps(n, nil)
		is.New(t).True(e.Steps()-before <= n) // no slice runs more steps than asked
		trace = append(trace, p.Trace...)
		if len(p.Calls) == 0 && !p.More {
			return trace, slices, e
		}
		e = roundTrip(t, prog, e)
		for _, c := range e.Outstanding() {
			is.New(t).NoErr(e.Complete(c.ID, answer(c)))
		}
	}
	t.Fatal("execution did not settle")
	return nil, 0, nil
}

func TestASelfLoopingStepRunsInSlicesUntilItsBudgetEndsIt(t *testing.T) {
	is := is.New(t)
	e, err := workflow.NewExecution(workflow.Program{Root: planOf(t, spin)}, nil, workflow.Options{MaxSteps: 25})
	is.NoErr(err)

	p := e.AdvanceSteps(10, nil)
	is.Equal(len(p.Trace), 10)                     // the slice ran the steps it was given
	is.True(p.More)                                // and says there is more to run
	is.Equal(e.Status(), workflow.StatusRunning)   // the run goes on
	is.Equal(e.Snapshot().Ready, []string{"root"}) // with its frame still first in the queue
	is.Equal(e.Steps(), 10)

	p = e.AdvanceSteps(10, nil)
	is.Equal(len(p.Trace), 10)
	is.True(p.More)

	p = e.AdvanceSteps(10, nil)
	is.Equal(len(p.Trace), 5) // the budget ends the third slice
	is.True(!p.More)
	errHas(t, e, "step budget exhausted: 25 steps executed")
}

func TestSlicesRunTheStepsOneAdvanceWould(t *testing.T) {
	// Calls, a concurrent foreach of pure steps and a loop of pure steps
	// around it, as one Advance runs them and in slices of 1 and 3 steps.
	const doc = `{"name":"w","start":"first",
		"input_schema":{"type":"object","properties":{"items":{"type":"array"}}},
		"state_schema":{"type":"object","properties":{"v":{"reducer":"wf.std.append"},"said":{"type":"string"}}},
		"output_schema":{"type":"object","properties":{"v":{},"said":{}}},
		"steps":{
		  "first":{"use":"fx.default.echo","input":[{"target":"text","value":"hi"}],"output":[{"source":"text","target":"state.said"}]},
		  "each":{"foreach":{"over":"input.items","as":"x","mode":"concurrent"}},
		  "put":{"use":"wf.std.constant","input":[{"target":"value","path":"context.x"}],"output":[{"source":"value","target":"state.v"}]},
		  "again":{"when":{"if":{"op":"lt","left":{"path":"context.x"},"right":{"value":3}},"then":"put2","otherwise":"each"}},
		  "put2":{"use":"wf.std.constant","input":[{"target":"value","value":0}],"output":[{"source":"value","target":"state.v"}]},
		  "last":{"use":"fx.default.echo","input":[{"target":"text","path":"state.said"}]}},
		"routes":{"first":{"ok":"each","error":"__end__"},"each":{"loop":"put","done":"last"},"put":{"ok":"again"},"put2":{"ok":"each"},"last":{"ok":"__end__","error":"__end__"}}}`
	plan := planOf(t, doc)
	prog := workflow.Program{Root: plan}
	input := workflow.Object{"items": []any{1.0, 2.0, 3.0, 4.0}}

	whole := start(t, prog, input)
	want := drive(t, whole, echoing)
	is.New(t).Equal(whole.Status(), workflow.StatusCompleted)

	for _, n := range []int{1, 3} {
		is := is.New(t)
		e := start(t, prog, input)
		trace, slices, e := driveSliced(t, prog, e, n, echoing)
		is.Equal(hops(trace), hops(want))                    // the same steps in the same order
		is.Equal(snapshotJSON(t, e), snapshotJSON(t, whole)) // to the same end
		is.True(slices >= whole.Steps()/n)                   // in as many slices as the steps need
	}
}

func TestASliceEndsOnceItsDriverSaysEnoughAfterAtLeastOneStep(t *testing.T) {
	is := is.New(t)
	e, err := workflow.NewExecution(workflow.Program{Root: planOf(t, spin)}, nil, workflow.Options{MaxSteps: 100})
	is.NoErr(err)

	p := e.AdvanceSteps(0, func() bool { return true })
	is.Equal(len(p.Trace), 1) // one step runs, however soon the driver has had enough
	is.True(p.More)

	asked := 0
	p = e.AdvanceSteps(50, func() bool { asked++; return asked == 7 })
	is.Equal(len(p.Trace), 7) // the driver's enough ends it
	is.True(p.More)

	p = e.AdvanceSteps(10, func() bool { return false })
	is.Equal(len(p.Trace), 10) // else its steps do
	is.Equal(e.Steps(), 18)
}
