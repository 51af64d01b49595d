package workflow_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// lostDraft routes the counter's session_lost outcome to an end step of
// its own.
const lostDraft = `{"name":"w","start":"count","outcomes":["ok","lost"],
	"state_schema":{"type":"object","properties":{"count":{"type":"integer"}}},
	"steps":{"count":{"use":"fixture.default.counter","output":[{"source":"count","target":"state.count"}]},
		"gone":{"end":{"outcome":"lost"}}},
	"routes":{"count":{"ok":"__end__","error":"__end__","session_lost":"gone"}}}`

func TestAnMCPToolStepMayRouteSessionLost(t *testing.T) {
	is := is.New(t)
	plan := compile(t, lostDraft) // valid: no undeclared_edge_outcome
	e, err := workflow.NewExecution(workflow.Program{Root: plan}, nil, options)
	is.NoErr(err)
	p := e.Advance()
	is.Equal(len(p.Calls), 1)
	is.True(e.Routes(p.Calls[0].ID, workflow.OutcomeSessionLost))
	is.True(!e.Routes(p.Calls[0].ID, "maybe"))
	// Its output is not the tool's and commits nothing.
	is.NoErr(e.Complete(p.Calls[0].ID, workflow.Result{Outcome: workflow.OutcomeSessionLost, Output: workflow.Object{"error": "session_lost: gone"}, Attempts: 1, Generation: 3}))
	trace := append(p.Trace, e.Advance().Trace...)
	is.Equal(e.Status(), workflow.StatusCompleted)
	is.Equal(e.Outcome(), "lost")
	is.Equal(trace[0].Outcome, workflow.OutcomeSessionLost)
	is.Equal(trace[0].Generation, int64(3))
	is.Equal(len(trace[0].StateChanges), 0)
}

func TestAStepNeedNotRouteSessionLost(t *testing.T) {
	is := is.New(t)
	draft, _ := workflow.Scaffold(counter, workflow.ScaffoldOptions{Name: "w"})
	is.Equal(workflow.ValidateDraft(draft, lookup), nil) // no missing_outcome_edge for it
}

func TestAPlatformStepCannotRouteSessionLost(t *testing.T) {
	is := is.New(t)
	d := draftOf(t, `{"name":"w","start":"a","steps":{"a":{"use":"wf.std.constant","input":[{"target":"value","value":1}]}},
		"routes":{"a":{"ok":"__end__","session_lost":"__end__"}}}`)
	diags := workflow.ValidateDraft(d, lookup)
	is.Equal(len(diags), 1)
	is.Equal(diags[0].Code, "undeclared_edge_outcome") // a built-in has no session to lose
}
