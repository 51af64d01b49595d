package workflow_test

import (
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// forkDraft is a concurrent foreach over input.items, then four counter
// steps a, b, c and d in a line; each call appends its count to
// state.seen.
const forkDraft = `{"name":"w","start":"each",
	"input_schema":{"type":"object","properties":{"items":{"type":"array"}}},
	"state_schema":{"type":"object","properties":{"seen":{"type":"array","reducer":"wf.std.append"}}},
	"output_schema":{"type":"object","properties":{"seen":{}}},
	"steps":{"each":{"foreach":{"over":"input.items","as":"thing","mode":"concurrent","item_error":"fail"}},
	  "call":{"use":"fixture.default.counter","input":[{"target":"item","path":"context.thing"}],"output":[{"source":"count","target":"state.seen"}]},
	  "a":{"use":"fixture.default.counter","output":[{"source":"count","target":"state.seen"}]},
	  "b":{"use":"fixture.default.counter","output":[{"source":"count","target":"state.seen"}]},
	  "c":{"use":"fixture.default.counter","output":[{"source":"count","target":"state.seen"}]},
	  "d":{"use":"fixture.default.counter","output":[{"source":"count","target":"state.seen"}]}},
	"routes":{"each":{"loop":"call","done":"a","completed_with_errors":"a"},"call":{"ok":"each","error":"each"},
	  "a":{"ok":"b","error":"__end__"},"b":{"ok":"c","error":"__end__"},"c":{"ok":"d","error":"__end__"},"d":{"ok":"__end__","error":"__end__"}}}`

// parentRun runs forkDraft on three items, answering each call with the
// next count from 1, and returns its program, input and trace.
func parentRun(t *testing.T) (workflow.Program, workflow.Object, []workflow.TraceEntry) {
	t.Helper()
	is := is.New(t)
	prog := workflow.Program{Root: compile(t, forkDraft)}
	input := workflow.Object{"items": []any{"x", "y", "z"}}
	e, err := workflow.NewExecution(prog, input, options)
	is.NoErr(err)
	trace := drive(t, e, counting())
	is.Equal(e.Status(), workflow.StatusCompleted)
	is.Equal(e.Output()["seen"], []any{1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0})
	return prog, input, trace
}

func TestAReplayCallsNothingBeforeItsForkPointAndGoesOnFromThere(t *testing.T) {
	is := is.New(t)
	prog, input, recorded := parentRun(t)
	e, replayed, err := workflow.Replay(prog, input, options, recorded, "c")
	is.NoErr(err)
	is.Equal(len(e.Outstanding()), 0) // nothing called yet
	is.Equal(e.Status(), workflow.StatusRunning)
	// The loop's three items and its end, then a and b: each replayed.
	is.Equal(hops(replayed), hops(recorded[:len(replayed)]))
	for _, t := range replayed {
		is.True(t.Replayed)
	}
	is.Equal(e.State()["seen"], []any{1.0, 2.0, 3.0, 4.0, 5.0})
	// From c on, the calls are made: two of them, c and d.
	calls := 0
	rest := drive(t, e, func(c workflow.Call) workflow.Result {
		calls++
		return workflow.Result{Outcome: "ok", Output: workflow.Object{"count": float64(100 + calls)}}
	})
	is.Equal(calls, 2)
	is.Equal(rest[0].NodeID, "c")
	is.True(!rest[0].Replayed)
	is.Equal(e.Output()["seen"], []any{1.0, 2.0, 3.0, 4.0, 5.0, 101.0, 102.0})
}

func TestAReplayFromTheStartReplaysNothing(t *testing.T) {
	is := is.New(t)
	prog, input, recorded := parentRun(t)
	e, replayed, err := workflow.Replay(prog, input, options, recorded, "each")
	is.NoErr(err)
	is.Equal(len(replayed), 0)
	is.Equal(len(e.Advance().Calls), 3) // the loop's items, called again
}

func TestAReplayThatCannotReachItsForkPointIsRefused(t *testing.T) {
	is := is.New(t)
	prog, input, recorded := parentRun(t)
	_, _, err := workflow.Replay(prog, input, options, recorded, "nowhere")
	is.True(errors.Is(err, workflow.ErrReplay))
	// A trace cut short before the fork point: the replay needs a
	// result it does not hold.
	_, _, err = workflow.Replay(prog, input, options, recorded[:2], "c")
	is.True(errors.Is(err, workflow.ErrReplay))
}

func TestForkPointsAreTheMainLineStepsARunReached(t *testing.T) {
	is := is.New(t)
	_, _, recorded := parentRun(t)
	is.Equal(workflow.ForkPoints(recorded, nil), []string{"each", "a", "b", "c", "d"})
	is.Equal(workflow.ForkPoints(recorded[:8], nil), []string{"each", "a", "b"}) // the loop and a ran: b is reached
	is.True(workflow.InForeachBody(recorded, "call"))
	is.True(!workflow.InForeachBody(recorded, "c"))
}

// A replay resumes an interrupt as the parent was resumed, and replays
// the calls of a subgraph's child, without calling anything.
func TestAReplayResumesInterruptsAndReplaysSubgraphs(t *testing.T) {
	is := is.New(t)
	child := compile(t, `{"name":"child","start":"c",
		"state_schema":{"type":"object","properties":{"y":{}}},
		"output_schema":{"type":"object","properties":{"y":{}}},
		"steps":{"c":{"use":"fixture.default.counter","output":[{"source":"count","target":"state.y"}]}},
		"routes":{"c":{"ok":"__end__","error":"__end__"}}}`)
	root := compile(t, `{"name":"w","start":"ask","outcomes":["ok","rejected"],
		"state_schema":{"type":"object","properties":{"approved":{"type":"boolean"},"got":{},"last":{}}},
		"output_schema":{"type":"object","properties":{"approved":{},"got":{},"last":{}}},
		"steps":{"ask":{"interrupt":{"kind":"approval","request":[{"target":"message","value":"ok?"}],
		   "resume":[{"source":"approved","target":"state.approved"}],
		   "resume_schema":{"type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"]},
		   "outcomes":["submitted","rejected"]}},
		  "sub":{"subgraph":{"workflow":{"artifact_id":"child","version":1},"output":[{"source":"y","target":"state.got"}]}},
		  "last":{"use":"fixture.default.counter","output":[{"source":"count","target":"state.last"}]},
		  "no":{"end":{"outcome":"rejected"}}},
		"routes":{"ask":{"submitted":"sub","rejected":"no"},"sub":{"ok":"last"},"last":{"ok":"__end__","error":"__end__"}}}`)
	_, key := ref("child", 1)
	prog := workflow.Program{Root: root, Children: map[string]workflow.Plan{key: child}}
	e, err := workflow.NewExecution(prog, nil, options)
	is.NoErr(err)
	count := counting()
	recorded := drive(t, e, count)
	is.Equal(e.Status(), workflow.StatusInterrupted)
	is.NoErr(e.Resume("submitted", workflow.Object{"approved": true}))
	recorded = append(recorded, drive(t, e, count)...)
	is.Equal(e.Output(), workflow.Object{"approved": true, "got": 1.0, "last": 2.0})

	r, replayed, err := workflow.Replay(prog, nil, options, recorded, "last")
	is.NoErr(err)
	is.Equal(len(replayed), 4) // the pause, the resume, the child's call, the subgraph's end
	is.Equal(r.State(), workflow.Object{"approved": true, "got": 1.0})
	calls := 0
	drive(t, r, func(workflow.Call) workflow.Result {
		calls++
		return workflow.Result{Outcome: "ok", Output: workflow.Object{"count": 9.0}}
	})
	is.Equal(calls, 1) // last alone
	is.Equal(r.Output(), workflow.Object{"approved": true, "got": 1.0, "last": 9.0})
	is.Equal(workflow.ForkPoints(recorded, nil), []string{"ask", "sub", "last"})
}

// A step whose call failed the run has no trace entry; its checkpoint
// still says where it stopped, and a fork may start there.
func TestAFailedRunForksFromTheStepItStoppedAt(t *testing.T) {
	is := is.New(t)
	prog := workflow.Program{Root: compile(t, forkDraft)}
	input := workflow.Object{"items": []any{}}
	e, err := workflow.NewExecution(prog, input, options)
	is.NoErr(err)
	recorded := drive(t, e, func(c workflow.Call) workflow.Result {
		if c.NodeID == "c" {
			return workflow.Result{Err: errors.New("upstream down")}
		}
		return workflow.Result{Outcome: "ok", Output: workflow.Object{"count": 1.0}}
	})
	is.Equal(e.Status(), workflow.StatusFailed)
	is.Equal(hops(recorded)[len(recorded)-1], "root b ok->c") // c left no entry
	snap := e.Snapshot()
	is.Equal(workflow.ForkPoints(recorded, &snap), []string{"each", "a", "b", "c"})
	is.Equal(workflow.ForkPoints(nil, &snap), []string{"c"}) // the checkpoint alone says where it stopped
	r, _, err := workflow.Replay(prog, input, options, recorded, "c")
	is.NoErr(err)
	is.Equal(r.Advance().Calls[0].NodeID, "c") // c is called again
}
