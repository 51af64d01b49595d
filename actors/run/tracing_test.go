package run_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/run"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/tracing"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// traced installs, for the test, a tracer provider that records every
// span in memory, with the service's id generator.
func traced(t *testing.T) *tracetest.SpanRecorder {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithIDGenerator(tracing.IDs()))
	restore := tracing.Install(tp)
	t.Cleanup(func() {
		restore()
		_ = tp.Shutdown(context.Background())
	})
	return rec
}

// runSpans are the spans of one run the recorder saw: started, and ended.
type runSpans struct {
	started []sdktrace.ReadWriteSpan
	ended   []sdktrace.ReadOnlySpan
}

func spansOf(rec *tracetest.SpanRecorder, runID string) runSpans {
	var s runSpans
	of := func(span sdktrace.ReadOnlySpan) bool {
		for _, kv := range span.Attributes() {
			if kv.Key == tracing.AttrRunID && kv.Value.AsString() == runID {
				return true
			}
		}
		return false
	}
	for _, span := range rec.Started() {
		if of(span) {
			s.started = append(s.started, span)
		}
	}
	for _, span := range rec.Ended() {
		if of(span) {
			s.ended = append(s.ended, span)
		}
	}
	return s
}

// attr is the value of key on span, as a string ("" when absent).
func attr(span sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range span.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

// checkTree checks that every span of the run ended, that exactly one is
// the run's root span, with the run's trace id, and that every other is
// a step span whose parent it is. It returns the run span and the step
// spans by node id, in the order they ended.
func checkTree(t *testing.T, s runSpans, runID string) (sdktrace.ReadOnlySpan, map[string][]sdktrace.ReadOnlySpan) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	is.Equal(len(s.ended), len(s.started)) // every span started has ended
	var root sdktrace.ReadOnlySpan
	steps := map[string][]sdktrace.ReadOnlySpan{}
	for _, span := range s.ended {
		if span.Name() == tracing.RunSpan {
			is.Equal(root, nil) // one run span
			root = span
		}
	}
	is.True(root != nil)                                              // the run span ended
	is.Equal(root.Parent().IsValid(), false)                          // a root span
	is.Equal(root.SpanContext().TraceID(), tracing.RunTraceID(runID)) // in the run's trace
	for _, span := range s.ended {
		if span == root {
			continue
		}
		is.Equal(span.Name(), tracing.StepSpan)
		is.Equal(span.Parent().SpanID(), root.SpanContext().SpanID()) // a step is a child of its run
		is.Equal(span.SpanContext().TraceID(), root.SpanContext().TraceID())
		node := attr(span, string(tracing.AttrNodeID))
		steps[node] = append(steps[node], span)
	}
	return root, steps
}

// compileDraft compiles a workflow document against fake.one's catalog.
func (w *world) compileDraft(t *testing.T, doc string) workflow.Plan {
	t.Helper()
	is := is.New(t)
	is.Helper()
	var obj workflow.Object
	is.NoErr(json.Unmarshal([]byte(doc), &obj))
	d, diags := workflow.ParseDraft(obj)
	is.Equal(diags, nil) // the draft parses
	is.Equal(workflow.ValidateDraft(d, w.capabilities(t)), nil)
	plan, err := workflow.Compile(d)
	is.NoErr(err)
	return plan
}

func TestTracingARunOfSeveralStepsIsOneSpanWithAChildPerStep(t *testing.T) {
	is := is.New(t)
	rec := traced(t)
	w := newWorld(t)
	plan := w.compileDraft(t, `{"name":"traced","start":"count","outcomes":["done"],
		"steps":{
		  "count":{"use":"fake.one.counter"},
		  "check":{"when":{"if":{"op":"exists","path":"input.message"},"then":"say","otherwise":"fin"}},
		  "say":{"use":"fake.one.echo","input":[{"target":"message","path":"input.message"}]},
		  "fin":{"end":{"outcome":"done"}}},
		"routes":{"count":{"ok":"check","error":"fin"},"say":{"ok":"fin","error":"fin"}}}`)

	_, final := w.start(t, "run-traced", plan, workflow.Object{"message": "hi"})
	is.Equal(final.Status, store.RunCompleted)

	root, steps := checkTree(t, spansOf(rec, "run-traced"), "run-traced")
	is.Equal(attr(root, "mcpflow.run.status"), store.RunCompleted)
	is.Equal(attr(root, "mcpflow.run.outcome"), "done")
	is.Equal(attr(root, "mcpflow.run.start"), "new")
	is.Equal(attr(root, "mcpflow.deployment.id"), "dep-1")
	is.Equal(root.Status().Code, codes.Unset)
	is.Equal(len(steps), 4) // count, check, say, fin: one span each
	for node, capability := range map[string]string{"count": "fake.one.counter", "say": "fake.one.echo"} {
		call := steps[node][0]
		is.Equal(call.SpanKind(), trace.SpanKindClient) // a call upstream
		is.Equal(attr(call, "mcpflow.step.outcome"), "ok")
		is.Equal(attr(call, "mcpflow.step.attempts"), "1")
		is.Equal(attr(call, "mcpflow.session.generation"), "1")
		is.Equal(attr(call, "mcpflow.step.connection"), "fake.one")
		is.Equal(attr(call, "mcpflow.step.capability"), capability)
	}
	is.Equal(attr(steps["check"][0], "mcpflow.step.type"), workflow.NodeCondition)
	is.Equal(attr(steps["check"][0], "mcpflow.step.outcome"), "true")
	is.Equal(attr(steps["fin"][0], "mcpflow.step.type"), workflow.NodeEnd)
	// The steps ran in order, within the run.
	is.True(!steps["count"][0].EndTime().After(steps["say"][0].StartTime()))
	for _, s := range []string{"count", "check", "say", "fin"} {
		is.True(!steps[s][0].StartTime().Before(root.StartTime()))
		is.True(!steps[s][0].EndTime().After(root.EndTime()))
	}
}

func TestTracingAFailedRunEndsItsSpansWithTheError(t *testing.T) {
	is := is.New(t)
	rec := traced(t)
	w := newWorld(t)
	_, final := w.start(t, "run-traced-fail", w.plan(t, "fail"), workflow.Object{})
	is.Equal(final.Status, store.RunFailed)

	root, steps := checkTree(t, spansOf(rec, "run-traced-fail"), "run-traced-fail")
	is.Equal(root.Status().Code, codes.Error)
	is.Equal(root.Status().Description, *final.Error)
	is.Equal(attr(root, "mcpflow.run.status"), store.RunFailed)
	call := steps[workflow.CallStep][0]
	is.Equal(attr(call, "mcpflow.step.outcome"), workflow.OutcomeError) // the tool reported an error
	is.Equal(call.Status().Code, codes.Error)
	// The built-in that failed the run ran in place and left no trace
	// entry, so no span: the run span's error names it.
	is.Equal(len(steps), 1)
}

func TestTracingACallThatFailsRecordsItsErrorAndAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		rec := traced(t)
		w := newWorld(t)
		plan := w.plan(t, "echo")
		one := 1
		plan.Nodes[0].Retry = &one
		targets := map[string]run.Target{"fake.one.echo": {Connection: "fake.gone", Tool: "echo"}}
		final := w.spawnPlan(t, "run-traced-retry", plan, targets, workflow.Object{"message": "hi"}, time.Time{})
		is.Equal(final.Status, store.RunFailed)

		_, steps := checkTree(t, spansOf(rec, "run-traced-retry"), "run-traced-retry")
		call := steps[workflow.CallStep][0]
		is.Equal(attr(call, "mcpflow.step.attempts"), "2")
		is.Equal(call.Status().Code, codes.Error)
		attempts, exceptions := 0, 0
		for _, e := range call.Events() {
			switch e.Name {
			case "attempt":
				attempts++
			case "exception":
				exceptions++
			}
		}
		is.Equal(attempts, 2)   // one event per attempt, in one span
		is.Equal(exceptions, 1) // the error recorded
	})
}

// startSleeping spawns a run actor of a 60 s sleep and waits until its call
// is out upstream.
func (w *world) startSleeping(t *testing.T, id string) (*actor.PID, *reply.Expected[run.Stopped]) {
	t.Helper()
	return w.startSleepingOn(t, id, w.store)
}

// startSleepingOn is startSleeping with the run committing to st: its
// call is out once its first record is committed there.
func (w *world) startSleepingOn(t *testing.T, id string, st store.Runs) (*actor.PID, *reply.Expected[run.Stopped]) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	plan := w.plan(t, "sleep")
	targets, err := run.Resolve(workflow.Program{Root: plan}, nil, func(c string) bool { return c == "fake.one" })
	is.NoErr(err)
	done := reply.Expect[run.Stopped](w.replies)
	now := time.Now().UTC()
	calls := len(w.rec.ToolCalls())
	pid := w.engine.Spawn(run.New(run.Spec{
		Record:  store.Run{ID: id, Status: store.RunRunning, Input: workflow.Object{"ms": 60_000}, CreatedAt: now, UpdatedAt: now},
		Program: workflow.Program{Root: plan}, Targets: targets,
		Supervisor: w.sup.PID(), Lines: w.sup.Lines(), Store: st,
		CallTimeout: 2 * time.Minute, StoreTimeout: 2 * time.Second, Done: done.To(),
	}), "run", actor.WithID(id))
	is.True(w.rec.WaitForToolCalls(calls+1, patience)) // the call is out
	return pid, done
}

func TestTracingACancelledOrHaltedRunEndsEverySpan(t *testing.T) {
	for _, tc := range []struct {
		name, status string
		// stop stops the run; it returns, when the run tells nobody,
		// a context done once the actor is gone.
		stop func(e *actor.Engine, pid *actor.PID) context.Context
	}{
		{"cancel", store.RunCancelled, func(e *actor.Engine, pid *actor.PID) context.Context {
			e.Send(pid, run.Cancel{Reason: "test"})
			return nil
		}},
		{"halt", store.RunRunning, func(e *actor.Engine, pid *actor.PID) context.Context {
			e.Send(pid, run.Halt{})
			return nil
		}},
		// Stopped from outside, as an engine shutting down would.
		{"poison", store.RunRunning, func(e *actor.Engine, pid *actor.PID) context.Context { return e.Poison(pid) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			rec := traced(t)
			w := newWorld(t)
			id := "run-traced-" + tc.name
			pid, done := w.startSleeping(t, id)
			if stopped := tc.stop(w.engine, pid); stopped != nil {
				select {
				case <-stopped.Done():
				case <-time.After(patience):
					is.Fail() // the poisoned actor stops in time
				}
			} else {
				stopped, err := done.Wait(wait(t))
				final := stopped.Run
				is.NoErr(err)
				is.Equal(final.Status, tc.status)
			}
			root, steps := checkTree(t, spansOf(rec, id), id)
			is.Equal(attr(root, "mcpflow.run.status"), tc.status)
			call := steps[workflow.CallStep][0]
			is.True(slices.ContainsFunc(call.Events(), func(e sdktrace.Event) bool { return e.Name == "run stopped during the step" }))
			is.Equal(attr(call, "mcpflow.step.outcome"), "") // it has none
		})
	}
}

func TestTracingAResumedRunIsANewRootSpanInTheSameTrace(t *testing.T) {
	is := is.New(t)
	rec := traced(t)
	w := newWorld(t)
	plan := w.compileDraft(t, `{"name":"asks","start":"count","outcomes":["ok"],
		"steps":{"count":{"use":"fake.one.counter"},"ask":{"interrupt":{"kind":"input"}}},
		"routes":{"count":{"ok":"ask","error":"ask"},"ask":{"submitted":"__end__"}}}`)
	_, interrupted := w.start(t, "run-traced-resume", plan, workflow.Object{})
	is.Equal(interrupted.Status, store.RunInterrupted)

	targets, err := run.Resolve(workflow.Program{Root: plan}, nil, func(c string) bool { return c == "fake.one" })
	is.NoErr(err)
	done := reply.Expect[run.Stopped](w.replies)
	w.engine.Spawn(run.New(run.Spec{
		Record: interrupted, Resume: &run.Resume{Outcome: "submitted", Payload: workflow.Object{}},
		Program: workflow.Program{Root: plan}, Targets: targets,
		Supervisor: w.sup.PID(), Lines: w.sup.Lines(), Store: w.store,
		CallTimeout: 2 * time.Second, StoreTimeout: 2 * time.Second, Done: done.To(),
	}), "run", actor.WithID("run-traced-resume-2"))
	stopped, err := done.Wait(wait(t))
	final := stopped.Run
	is.NoErr(err)
	is.Equal(final.Status, store.RunCompleted)

	s := spansOf(rec, "run-traced-resume")
	is.Equal(len(s.ended), len(s.started)) // every span ended
	var roots []sdktrace.ReadOnlySpan
	for _, span := range s.ended {
		is.Equal(span.SpanContext().TraceID(), tracing.RunTraceID("run-traced-resume")) // one trace for the run
		if span.Name() == tracing.RunSpan {
			roots = append(roots, span)
		}
	}
	is.Equal(len(roots), 2) // one root span per incarnation
	is.Equal(attr(roots[0], "mcpflow.run.start"), "new")
	is.Equal(attr(roots[0], "mcpflow.run.status"), store.RunInterrupted)
	is.Equal(attr(roots[1], "mcpflow.run.start"), "resume")
	is.Equal(attr(roots[1], "mcpflow.run.status"), store.RunCompleted)
	is.True(!roots[1].Parent().IsValid()) // a root span, not a child of the first
}
