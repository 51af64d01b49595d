package workflow_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

const approvalDraft = `{"name":"w","start":"ask","outcomes":["ok","rejected"],
	"input_schema":{"type":"object","properties":{"doc":{"type":"string"}}},
	"state_schema":{"type":"object","properties":{"approved":{"type":"boolean"},"note":{"type":"string"}}},
	"output_schema":{"type":"object","properties":{"approved":{},"note":{}}},
	"steps":{"ask":{"interrupt":{"kind":"approval",
	    "request":[{"target":"message","value":"approve?"},{"target":"doc","path":"input.doc"}],
	    "resume":[{"source":"approved","target":"state.approved"},{"source":"note","target":"state.note"}],
	    "request_schema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]},
	    "resume_schema":{"type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"]},
	    "outcomes":["submitted","rejected"]}},
	  "no":{"end":{"outcome":"rejected"}}},
	"routes":{"ask":{"submitted":"__end__","rejected":"no"}}}`

func TestInterruptPausesWithItsRequestAndResumeContinues(t *testing.T) {
	is := is.New(t)
	prog := workflow.Program{Root: planOf(t, approvalDraft)}
	e := start(t, prog, workflow.Object{"doc": "plan.md"})
	trace := drive(t, e, noCalls(t))
	is.Equal(e.Status(), workflow.StatusInterrupted)
	request := workflow.Object{"message": "approve?", "doc": "plan.md"}
	is.Equal(trace, []workflow.TraceEntry{{
		FrameID: "root", NodeID: "ask", StepType: workflow.NodeInterrupt, ResolvedInput: request,
		Outcome: workflow.OutcomeInterrupt, NextNodeID: "ask", Output: request, StateChanges: workflow.Object{},
	}})
	in := e.Interrupt()
	is.Equal(in.ID, "interrupt:ask")
	is.Equal(in.FrameID, "root")
	is.Equal(in.NodeID, "ask")
	is.Equal(in.Kind, "approval")
	is.Equal(in.Payload, request)
	is.True(in.Resumable)
	is.True(in.Typed) // it declares its schemas
	is.Equal(in.Route, nil)
	is.Equal(in.Outcomes, []string{"submitted", "rejected"})
	is.Equal(in.ResumeSchema["required"], []any{"approved"})

	// Resume from a checkpoint.
	e = roundTrip(t, prog, e)
	is.Equal(e.Status(), workflow.StatusInterrupted)
	is.NoErr(e.Resume("", workflow.Object{"approved": true, "note": "fine"})) // "" is the first outcome
	p := e.Advance()
	is.Equal(p.Trace, []workflow.TraceEntry{{
		FrameID: "root", NodeID: "ask", StepType: workflow.NodeInterrupt,
		ResolvedInput: workflow.Object{"approved": true, "note": "fine"}, Outcome: "submitted", NextNodeID: workflow.End,
		Output:       workflow.Object{"approved": true, "note": "fine"},
		StateChanges: workflow.Object{"state.approved": true, "state.note": "fine"},
	}})
	is.Equal(e.Status(), workflow.StatusCompleted)
	is.Equal(e.Outcome(), workflow.OutcomeOK)
	is.Equal(e.Output(), workflow.Object{"approved": true, "note": "fine"})
	is.Equal(e.Interrupt(), nil)
}

func TestResumeOutcomeRoutes(t *testing.T) {
	is := is.New(t)
	e := start(t, workflow.Program{Root: planOf(t, approvalDraft)}, nil)
	drive(t, e, noCalls(t))
	is.NoErr(e.Resume("rejected", workflow.Object{"approved": false, "note": "no"}))
	trace := drive(t, e, noCalls(t))
	is.Equal(hops(trace), []string{"root ask rejected->no", "root no rejected->__end__"})
	is.Equal(e.Outcome(), "rejected")
}

func TestAnUntypedInterruptAcceptsAnyObject(t *testing.T) {
	is := is.New(t)
	e := start(t, workflow.Program{Root: planOf(t, `{"name":"w","start":"ask",
		"steps":{"ask":{"interrupt":{"kind":"input"}}},"routes":{"ask":{"submitted":"__end__"}}}`)}, nil)
	drive(t, e, noCalls(t))
	in := e.Interrupt()
	is.True(!in.Typed)
	is.Equal(in.Payload, workflow.Object{})
	is.Equal(in.Outcomes, []string{workflow.OutcomeSubmitted})
	is.Equal(in.RequestSchema, workflow.DefaultInterruptSchema())
	is.Equal(in.ResumeSchema, workflow.DefaultInterruptSchema())
	is.NoErr(e.Resume("submitted", workflow.Object{"anything": []any{1.0}}))
	drive(t, e, noCalls(t))
	is.Equal(e.Status(), workflow.StatusCompleted)
}

func TestRefusedResumesLeaveTheRunUnchanged(t *testing.T) {
	for _, tc := range []struct {
		name, outcome string
		payload       workflow.Object
		err           string
	}{
		{"undeclared outcome", "maybe", workflow.Object{"approved": true, "note": "x"}, `outcome "maybe" is not one of [submitted rejected]`},
		{"payload breaks the resume schema", "submitted", workflow.Object{"approved": "yes", "note": "x"}, `step "ask" resume payload: at /approved: type`},
		{"payload lacks a required field", "submitted", workflow.Object{"note": "x"}, `step "ask" resume payload: at /approved: required`},
		{"payload lacks a bound field", "submitted", workflow.Object{"approved": true}, `step "ask": output has no field note for state.note`},
		// The resume schema allows any note; the state schema wants a string.
		{"commit breaks the state schema", "submitted", workflow.Object{"approved": true, "note": 5.0}, `step "ask": state.note: at (root): type`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			e := start(t, workflow.Program{Root: planOf(t, approvalDraft)}, nil)
			drive(t, e, noCalls(t))
			before := snapshotJSON(t, e)
			err := e.Resume(tc.outcome, tc.payload)
			is.True(errors.Is(err, workflow.ErrResume))
			if !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %q does not contain %q", err, tc.err)
			}
			is.Equal(snapshotJSON(t, e), before) // nothing changed
			is.Equal(len(e.Advance().Trace), 0)
			is.Equal(e.Status(), workflow.StatusInterrupted)
			// A good payload still goes through.
			is.NoErr(e.Resume("submitted", workflow.Object{"approved": true, "note": "ok"}))
			drive(t, e, noCalls(t))
			is.Equal(e.Status(), workflow.StatusCompleted)
		})
	}
}

func TestResumeIsRefusedWhenTheRunIsNotInterrupted(t *testing.T) {
	is := is.New(t)
	e, _ := runDraft(t, `{"name":"w","start":"j","steps":{"j":{"join":{}}},"routes":{"j":{"done":"__end__"}}}`, nil, noCalls(t))
	is.Equal(e.Status(), workflow.StatusCompleted)
	err := e.Resume("submitted", nil)
	is.True(errors.Is(err, workflow.ErrResume))
	is.Equal(err.Error(), "resume refused: the run is completed, not interrupted")
}

func TestInterruptRequestMustMatchItsSchema(t *testing.T) {
	e, _ := runDraft(t, strings.Replace(approvalDraft, `"value":"approve?"`, `"value":5`, 1), nil, noCalls(t))
	errHas(t, e, `step "ask" request: at /message: type`)
}

func TestInterruptInsideAConcurrentForeachWaitsForTheOtherItems(t *testing.T) {
	is := is.New(t)
	prog := workflow.Program{Root: planOf(t, `{"name":"w","start":"each",
		"state_schema":{"type":"object","properties":{"got":{"type":"array","reducer":"wf.std.append"}}},
		"output_schema":{"type":"object","properties":{"got":{}}},
		"steps":{"each":{"foreach":{"over":"input.items","as":"x","mode":"concurrent"}},
		  "ask":{"interrupt":{"kind":"pick","request":[{"target":"x","path":"context.x"}],"resume":[{"source":"v","target":"state.got"}]}}},
		"routes":{"each":{"loop":"ask","done":"__end__"},"ask":{"submitted":"each"}}}`)}
	e := start(t, prog, workflow.Object{"items": []any{"a", "b"}})
	for _, want := range []string{"a", "b"} {
		drive(t, e, noCalls(t))
		is.Equal(e.Status(), workflow.StatusInterrupted)
		is.Equal(e.Interrupt().Payload, workflow.Object{"x": want})
		e = roundTrip(t, prog, e)
		is.NoErr(e.Resume("submitted", workflow.Object{"v": want + "!"}))
		if want == "a" {
			is.Equal(e.State(), workflow.Object{}) // buffered until the barrier
		}
	}
	trace := drive(t, e, noCalls(t))
	is.Equal(e.Status(), workflow.StatusCompleted)
	is.Equal(e.Output(), workflow.Object{"got": []any{"a!", "b!"}})
	is.Equal(hops(trace[len(trace)-1:]), []string{"root each done->__end__"})
}

// Subgraphs.

const childDraft = `{"name":"child","start":"copy","outcomes":["ok","negative"],
	"input_schema":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"]},
	"state_schema":{"type":"object","properties":{"y":{}}},
	"output_schema":{"type":"object","properties":{"y":{}}},
	"steps":{"copy":{"use":"wf.std.constant","input":[{"target":"value","path":"input.x"}],"output":[{"source":"value","target":"state.y"}]},
	  "check":{"when":{"if":{"op":"lt","left":{"path":"input.x"},"right":{"value":0}},"then":"neg"}},
	  "neg":{"end":{"outcome":"negative"}}},
	"routes":{"copy":{"ok":"check"}}}`

const parentDraft = `{"name":"parent","start":"sub","outcomes":["ok","refused"],
	"input_schema":{"type":"object","properties":{"n":{"type":"number"}}},
	"state_schema":{"type":"object","properties":{"got":{}}},
	"output_schema":{"type":"object","properties":{"got":{}}},
	"steps":{"sub":{"subgraph":{"workflow":{"artifact_id":"child","version":1},"outcomes":["ok","negative"],
	    "input":[{"target":"x","path":"input.n"}],"output":[{"source":"y","target":"state.got"}]}},
	  "refuse":{"end":{"outcome":"refused"}}},
	"routes":{"sub":{"ok":"__end__","negative":"refuse"}}}`

func childProgram(t *testing.T, parent, child string) workflow.Program {
	_, key := ref("child", 1)
	return workflow.Program{Root: planOf(t, parent), Children: map[string]workflow.Plan{key: planOf(t, child)}}
}

func TestSubgraphRoutesOnTheChildOutcome(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n       float64
		outcome string
		output  workflow.Object
		child   workflow.Object
		want    []string
	}{
		{"ok", 4, "ok", workflow.Object{"got": 4.0}, workflow.Object{"y": 4.0}, []string{
			"root:subgraph:sub:frame copy ok->check", "root:subgraph:sub:frame check false->__end__", "root sub ok->__end__"}},
		{"negative", -1, "refused", workflow.Object{"got": -1.0}, workflow.Object{"y": -1.0}, []string{
			"root:subgraph:sub:frame copy ok->check", "root:subgraph:sub:frame check true->neg", "root:subgraph:sub:frame neg negative->__end__",
			"root sub negative->refuse", "root refuse refused->__end__"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			e := start(t, childProgram(t, parentDraft, childDraft), workflow.Object{"n": tc.n})
			trace := drive(t, e, noCalls(t))
			is.Equal(e.Status(), workflow.StatusCompleted)
			is.Equal(e.Outcome(), tc.outcome)
			is.Equal(e.Output(), tc.output)
			is.Equal(hops(trace), tc.want)
			sub := entry(t, trace, "root", "sub")
			is.Equal(sub.StepType, workflow.NodeSubgraph)
			is.Equal(sub.ResolvedInput, workflow.Object{"x": tc.n})
			is.Equal(sub.Output, tc.child) // the child's public output
		})
	}
}

func TestSubgraphChecksItsInputAndNeedsItsChild(t *testing.T) {
	is := is.New(t)
	// The child's input schema requires x; the parent passes none.
	e := start(t, childProgram(t, parentDraft, childDraft), workflow.Object{})
	drive(t, e, noCalls(t))
	errHas(t, e, `step "sub" child workflow input: at /x: required`)

	e, err := workflow.NewExecution(workflow.Program{Root: planOf(t, parentDraft)}, workflow.Object{"n": 1.0}, strict)
	is.NoErr(err)
	drive(t, e, noCalls(t))
	errHas(t, e, `step "sub": child workflow child@1 is not loaded`)
}

const askingChild = `{"name":"child","start":"ask",
	"input_schema":{"type":"object","properties":{"q":{"type":"string"}}},
	"state_schema":{"type":"object","properties":{"answer":{"type":"string"}}},
	"output_schema":{"type":"object","properties":{"answer":{"type":"string"}}},
	"steps":{"ask":{"interrupt":{"kind":"question","request":[{"target":"q","path":"input.q"}],
	  "resume":[{"source":"answer","target":"state.answer"}],
	  "resume_schema":{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}}}},
	"routes":{"ask":{"submitted":"__end__"}}}`

const askingParent = `{"name":"parent","start":"sub",
	"state_schema":{"type":"object","properties":{"reply":{"type":"string"}}},
	"output_schema":{"type":"object","properties":{"reply":{"type":"string"}}},
	"steps":{"sub":{"subgraph":{"workflow":{"artifact_id":"child","version":1},
	  "input":[{"target":"q","value":"why?"}],"output":[{"source":"answer","target":"state.reply"}]}}},
	"routes":{"sub":{"ok":"__end__"}}}`

func TestAnInterruptInsideASubgraphBubblesAndResumesInTheChild(t *testing.T) {
	is := is.New(t)
	prog := childProgram(t, askingParent, askingChild)
	e := start(t, prog, nil)
	trace := drive(t, e, noCalls(t))
	is.Equal(e.Status(), workflow.StatusInterrupted)
	is.Equal(hops(trace), []string{"root:subgraph:sub:frame ask interrupt->ask"})
	in := e.Interrupt()
	// Publicly the run waits at the parent's subgraph step...
	is.Equal(in.ID, "interrupt:sub")
	is.Equal(in.FrameID, "root")
	is.Equal(in.NodeID, "sub")
	is.Equal(in.Payload, workflow.Object{"q": "why?"})
	// ...and the route says where inside the child.
	childRef, _ := ref("child", 1)
	is.Equal(*in.Route, workflow.InterruptRoute{
		FrameID: "root:subgraph:sub:frame", NodeID: "ask", ScopeID: "root:subgraph:sub",
		LineageID: "root:subgraph:sub:root", ParentFrameID: "root", WorkflowRef: childRef,
	})

	e = roundTrip(t, prog, e)
	is.True(errors.Is(e.Resume("submitted", workflow.Object{"answer": 42.0}), workflow.ErrResume)) // the child's resume schema applies
	is.NoErr(e.Resume("submitted", workflow.Object{"answer": "because"}))
	trace = drive(t, e, noCalls(t))
	is.Equal(hops(trace), []string{"root:subgraph:sub:frame ask submitted->__end__", "root sub ok->__end__"})
	is.Equal(trace[0].StateChanges, workflow.Object{"state.answer": "because"})
	is.Equal(trace[1].StateChanges, workflow.Object{"state.reply": "because"})
	is.Equal(e.Status(), workflow.StatusCompleted)
	is.Equal(e.Output(), workflow.Object{"reply": "because"})
}

func TestAFailingChildIsTheFailureOfItsForeachItem(t *testing.T) {
	for _, mode := range []string{"serial", "concurrent"} {
		t.Run(mode, func(t *testing.T) {
			is := is.New(t)
			prog := childProgram(t, `{"name":"parent","start":"each",
				"state_schema":{"type":"object","properties":{"got":{"type":"array","reducer":"wf.std.append"},"errors":{"type":"array"}}},
				"output_schema":{"type":"object","properties":{"got":{},"errors":{}}},
				"steps":{"each":{"foreach":{"over":"input.xs","as":"x","mode":"`+mode+`","item_error":{"action":"collect","collect_to":"state.errors"}}},
				  "sub":{"subgraph":{"workflow":{"artifact_id":"child","version":1},
				    "input":[{"target":"x","path":"context.x"}],"output":[{"source":"y","target":"state.got"}]}}},
				"routes":{"each":{"loop":"sub","done":"__end__","completed_with_errors":"__end__"},"sub":{"ok":"each"}}}`,
				`{"name":"child","start":"check",
				"state_schema":{"type":"object","properties":{"y":{}}},
				"output_schema":{"type":"object","properties":{"y":{}}},
				"steps":{"check":{"when":{"if":{"op":"lt","left":{"path":"input.x"},"right":{"value":0}},"then":"boom","otherwise":"copy"}},
				  "copy":{"use":"wf.std.constant","input":[{"target":"value","path":"input.x"}],"output":[{"source":"value","target":"state.y"}]},
				  "boom":{"use":"wf.std.runtime_error","input":[{"target":"message","value":"negative"}]}},
				"routes":{"copy":{"ok":"__end__"},"boom":{"ok":"__end__"}}}`)
			e := start(t, prog, workflow.Object{"xs": []any{1.0, -2.0, 3.0}})
			trace := drive(t, e, noCalls(t))
			is.Equal(e.Status(), workflow.StatusCompleted)
			is.Equal(hops(trace[len(trace)-1:]), []string{"root each completed_with_errors->__end__"})
			is.Equal(e.State()["got"], []any{1.0, 3.0})
			errs := e.State()["errors"].([]any)
			is.Equal(len(errs), 1)
			is.Equal(errs[0].(map[string]any)["index"], 1.0)
			is.Equal(errs[0].(map[string]any)["message"], `step "boom": negative`)
			is.Equal(len(e.Snapshot().Scopes), 1) // the failed child's scope is gone
			is.Equal(len(e.Snapshot().Frames), 1)
		})
	}
}

func TestPausedItemsResumeInTheOrderTheyPaused(t *testing.T) {
	is := is.New(t)
	items := make([]any, 12)
	for i := range items {
		items[i] = float64(i)
	}
	e, _ := runDraft(t, `{"name":"w","start":"each",
		"steps":{"each":{"foreach":{"over":"input.items","as":"x","mode":"concurrent","concurrent":{"max_active":12}}},
		  "ask":{"interrupt":{"kind":"approval","request":[{"target":"item","path":"context.x"}]}}},
		"routes":{"each":{"loop":"ask","done":"__end__"},"ask":{"submitted":"each"}}}`, workflow.Object{"items": items}, noCalls(t))
	var order []any
	for e.Status() == workflow.StatusInterrupted {
		order = append(order, e.Interrupt().Payload["item"])
		is.NoErr(e.Resume("", nil))
		e.Advance()
	}
	is.Equal(e.Status(), workflow.StatusCompleted)
	is.Equal(order, items) // item 10 does not jump ahead of item 2
}
