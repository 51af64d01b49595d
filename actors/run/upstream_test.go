package run_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/run"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/schema"
	"github.com/mcpflow/mcpflow/fakes"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// askingWorld is a world whose fake.one has the asking tools (asker
// records what their requests got), answering as client says.
func askingWorld(t *testing.T, client *config.Client) (*world, *fakes.Asker) {
	t.Helper()
	asker := fakes.NewAsker()
	return newWorldAnswering(t, func() *mcp.Server { return asker.Serve(fakes.NewServer()) }, client), asker
}

// validating are the execution options of a run that checks answers
// against their schemas, as the service's runs do.
var validating = workflow.Options{Validate: schema.Default.Validate}

// interrupted launches a run of tool and waits until an upstream request
// interrupts it.
func (w *world) interrupted(t *testing.T, id string, plan workflow.Plan, input workflow.Object, deadline time.Time) (launched, store.Run) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	l := w.launch(t, id, plan, input, validating, deadline)
	r := l.stopped(t) // Done is answered when the run pauses
	is.Equal(r.Status, store.RunInterrupted)
	return l, r
}

// answer sends the run an AnswerInterrupt and waits for it to be taken.
func (w *world) answer(t *testing.T, l launched, outcome string, payload workflow.Object) (run.Resumed, *reply.Expected[run.Stopped]) {
	t.Helper()
	taken, done := reply.Expect[run.Resumed](w.replies), reply.Expect[run.Stopped](w.replies)
	w.engine.Send(l.pid, run.AnswerInterrupt{Outcome: outcome, Payload: payload, Reply: taken.To(), Done: done.To()})
	got, err := taken.Wait(wait(t))
	is.New(t).NoErr(err) // the run answers the resume
	return got, done
}

// ended waits until the store has run id ended, and returns it: nobody
// waits on an interrupted run's actor any more.
func (w *world) ended(t *testing.T, id string) store.Run {
	t.Helper()
	return poll.Value(t, "run "+id+" ended", patience, func() (store.Run, bool) {
		r, err := w.store.GetRun(context.Background(), id)
		return r, err == nil && r.Status != store.RunRunning && r.Status != store.RunInterrupted
	})
}

func TestAnUpstreamElicitationInterruptsTheRunAndItsResumeAnswersTheServer(t *testing.T) {
	is := is.New(t)
	w, asker := askingWorld(t, nil)
	plan := w.plan(t, "ask")
	l, r := w.interrupted(t, "run-ask", plan, workflow.Object{"message": "your name?"}, time.Time{})
	is.Equal(r.Interrupt.Kind, "elicitation")
	is.Equal(r.Interrupt.ResumeSchema, workflow.Object(fakes.AskSchema)) // the requested schema
	is.Equal(r.Interrupt.Outcomes, []string{"accept", "decline", "cancel"})
	is.Equal(r.Interrupt.Payload["message"], "your name?")
	is.Equal(r.Interrupt.Payload["mode"], "form")
	is.Equal(r.Interrupt.Payload["connection"], "fake.one")
	stored, err := w.store.GetRun(wait(t), "run-ask")
	is.NoErr(err)
	is.Equal(stored.Status, store.RunInterrupted) // committed so

	refused, _ := w.answer(t, l, "accept", workflow.Object{"name": 42})
	is.True(errors.Is(refused.Error.Err(), workflow.ErrResume)) // a payload that breaks the schema is refused
	stored, err = w.store.GetRun(wait(t), "run-ask")
	is.NoErr(err)
	is.Equal(stored.Status, store.RunInterrupted) // and the run stays interrupted
	is.Equal(len(asker.Got()), 0)                 // nothing reached the server

	taken, done := w.answer(t, l, "accept", workflow.Object{"name": "Ada"})
	is.NoErr(taken.Error.Err())
	final, err := done.Wait(wait(t))
	is.NoErr(err)
	is.Equal(final.Run.Status, store.RunCompleted)
	is.Equal(final.Run.Output, workflow.Object{"action": "accept", "content": map[string]any{"name": "Ada"}}) // the server's result
	is.Equal(asker.Got(), []string{`accept {"name":"Ada"}`})
	trace, err := w.store.ReadTrace(wait(t), "run-ask", 0, 0)
	is.NoErr(err)
	is.Equal(len(trace[0].Upstream), 1) // the exchange is in the step's trace
	is.Equal(trace[0].Upstream[0]["outcome"], "accept")
}

func TestADeclineOrACancelOfAnUpstreamElicitationReachesTheServer(t *testing.T) {
	is := is.New(t)
	w, asker := askingWorld(t, nil)
	plan := w.plan(t, "ask")
	for i, outcome := range []string{"decline", "cancel"} {
		l, _ := w.interrupted(t, "run-"+outcome, plan, workflow.Object{"message": "?"}, time.Time{})
		taken, done := w.answer(t, l, outcome, nil)
		is.NoErr(taken.Error.Err())
		final, err := done.Wait(wait(t))
		is.NoErr(err)
		is.Equal(final.Run.Status, store.RunCompleted)
		is.Equal(final.Run.Output, workflow.Object{"action": outcome, "content": map[string]any{}})
		is.Equal(asker.Got()[i], outcome) // the outcome reached the server
	}
}

func TestAnUpstreamSamplingInterruptIsAnsweredWithAMessage(t *testing.T) {
	is := is.New(t)
	w, asker := askingWorld(t, &config.Client{Sampling: config.PolicyInterrupt})
	plan := w.plan(t, "sample")
	l, r := w.interrupted(t, "run-sample", plan, workflow.Object{"prompt": "2+2?"}, time.Time{})
	is.Equal(r.Interrupt.Kind, "sampling")
	is.Equal(r.Interrupt.Outcomes, []string{"accept", "decline"})
	messages, _ := r.Interrupt.Payload["messages"].([]any)
	is.Equal(len(messages), 1) // the request's messages
	is.Equal(messages[0].(map[string]any)["content"].(map[string]any)["text"], "2+2?")

	refused, _ := w.answer(t, l, "accept", workflow.Object{"role": "assistant"})
	is.True(errors.Is(refused.Error.Err(), workflow.ErrResume)) // not a message
	taken, done := w.answer(t, l, "accept", workflow.Object{"role": "assistant", "content": map[string]any{"type": "text", "text": "4"}, "model": "m1"})
	is.NoErr(taken.Error.Err())
	final, err := done.Wait(wait(t))
	is.NoErr(err)
	is.Equal(final.Run.Status, store.RunCompleted)
	is.Equal(final.Run.Output, workflow.Object{"role": "assistant", "model": "m1", "text": "4"})
	is.Equal(asker.Got(), []string{"sampled m1: 4"})
}

func TestARefusedSamplingRequestFailsTheStepSayingHowToTakeIt(t *testing.T) {
	is := is.New(t)
	w, asker := askingWorld(t, nil) // sampling: refuse, the default
	_, final := w.startWith(t, "run-refused", w.plan(t, "sample"), workflow.Object{"prompt": "2+2?"}, validating)
	is.Equal(final.Status, store.RunFailed)
	is.True(strings.Contains(*final.Error, `mcpflow refuses sampling on source "fake.one" (its client block's "sampling" is "refuse", the default); set "client": {"sampling": "interrupt"}`)) // the refusal's text
	is.Equal(len(asker.Got()), 1)
	is.True(strings.HasPrefix(asker.Got()[0], "error: ")) // the server got the refusal
}

// The bounds of the wait: the step's timeout, the run's deadline and a
// cancel end the call, and the server's request with it.

// cancelledUpstream reports whether the server's request ended as the
// call's end should end it: answered cancel, or cancelled with the call
// (the two race to the server).
func cancelledUpstream(t *testing.T, asker *fakes.Asker) bool {
	t.Helper()
	if !asker.WaitForGot(1, patience) {
		return false
	}
	got := asker.Got()
	return len(got) == 1 && (got[0] == fakes.AskCancel || got[0] == fakes.AskCancelled)
}

func TestTheStepsTimeoutEndsTheWaitForAnUpstreamAnswer(t *testing.T) {
	is := is.New(t)
	w, asker := askingWorld(t, nil)
	plan := w.plan(t, "ask")
	one := 1
	plan.Nodes[0].TimeoutSeconds = &one
	w.interrupted(t, "run-timeout", plan, workflow.Object{"message": "?"}, time.Time{})
	final := w.ended(t, "run-timeout")
	is.Equal(final.Status, store.RunFailed)
	is.True(strings.Contains(*final.Error, "no answer within 1s (the step's timeout)")) // it says why
	is.True(cancelledUpstream(t, asker))
}

func TestTheRunsDeadlineEndsTheWaitForAnUpstreamAnswer(t *testing.T) {
	is := is.New(t)
	w, asker := askingWorld(t, nil)
	plan := w.plan(t, "ask")
	w.interrupted(t, "run-late", plan, workflow.Object{"message": "?"}, time.Now().Add(time.Second))
	final := w.ended(t, "run-late")
	is.Equal(final.Status, store.RunFailed)
	is.True(strings.HasPrefix(*final.Error, "run deadline "))
	is.True(strings.HasSuffix(*final.Error, `passed, while step "call" was running`))
	is.True(cancelledUpstream(t, asker))
}

func TestACancelEndsTheWaitForAnUpstreamAnswer(t *testing.T) {
	is := is.New(t)
	w, asker := askingWorld(t, nil)
	plan := w.plan(t, "ask")
	l, _ := w.interrupted(t, "run-cancel", plan, workflow.Object{"message": "?"}, time.Time{})
	stopped := reply.Expect[run.Stopped](w.replies)
	w.engine.Send(l.pid, run.Cancel{Reason: "by the test", Reply: stopped.To()})
	final, err := stopped.Wait(wait(t))
	is.NoErr(err)
	is.Equal(final.Run.Status, store.RunCancelled)
	is.Equal(final.Run.Interrupt, nil) // no longer waiting
	is.True(cancelledUpstream(t, asker))
}

// lostRun interrupts a run of plan on the ask tool, drops its actor as a
// dying process would, and starts it again from its stored checkpoint
// with the call that asked lost (as actors/runs recovers it); it returns
// the run's final record.
func (w *world) lostRun(t *testing.T, id string, plan workflow.Plan, opts workflow.Options) store.Run {
	t.Helper()
	is := is.New(t)
	is.Helper()
	l, _ := w.interrupted(t, id, plan, workflow.Object{"message": "?"}, time.Time{})
	<-w.engine.Poison(l.pid).Done() // no commit, no withdrawal: the process died
	rec, err := w.store.GetRun(wait(t), id)
	is.NoErr(err)
	is.Equal(len(rec.Checkpoint.Calls), 1) // the call that asked, in flight
	lost := map[string]string{}
	for callID := range rec.Checkpoint.Calls {
		lost[callID] = "the test lost it"
	}
	rec.Status, rec.Interrupt, rec.ResumeReadiness = store.RunRunning, nil, "not_applicable"
	return w.launchRecord(t, rec, plan, opts, time.Time{}, lost, nil).stopped(t)
}

func TestACallWhoseUpstreamRequestWasLostFailsWithElicitationLost(t *testing.T) {
	is := is.New(t)
	w, _ := askingWorld(t, nil)
	final := w.lostRun(t, "run-lost", w.plan(t, "ask"), validating)
	is.Equal(final.Status, store.RunFailed)
	is.Equal(*final.Error, `step "call": elicitation_lost: the test lost it`)
	is.Equal(len(w.rec.ToolCalls()), 1) // not sent again
}

func TestAWorkflowMayRouteElicitationLost(t *testing.T) {
	is := is.New(t)
	w, _ := askingWorld(t, nil)
	lookup := w.capabilities(t)
	var doc workflow.Object
	is.NoErr(json.Unmarshal([]byte(`{"name":"w","start":"call","outcomes":["ok","lost"],
		"steps":{"call":{"use":"fake.one.ask","input":[{"target":"message","path":"input.message"}]},"gone":{"end":{"outcome":"lost"}}},
		"routes":{"call":{"ok":"__end__","error":"gone","elicitation_lost":"gone"}}}`), &doc))
	d, diags := workflow.ParseDraft(doc)
	is.Equal(diags, nil)
	is.Equal(workflow.ValidateDraft(d, lookup), nil) // an MCP tool step may route it undeclared
	plan, err := workflow.Compile(d)
	is.NoErr(err)

	opts := validating
	opts.Capability = lookup
	final := w.lostRun(t, "run-routed", plan, opts)
	is.Equal(final.Status, store.RunCompleted)
	is.Equal(*final.Outcome, "lost")
	trace, err := w.store.ReadTrace(wait(t), "run-routed", 0, 0)
	is.NoErr(err)
	is.Equal(trace[0].Outcome, workflow.OutcomeElicitationLost)
	is.Equal(trace[0].Error, "elicitation_lost: the test lost it") // why, in the step's error
}
