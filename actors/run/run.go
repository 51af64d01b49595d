// Package run owns the run actor: one actor per workflow run. It drives a
// workflow.Execution step by step, sends each tool call to the supervisor
// (which routes it to the connection's session actor), runs platform
// built-ins in place, and commits every step to the store before it goes
// on. Nothing waits on I/O inside its inbox: store writes and tool calls
// finish as messages.
package run

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcpflow/mcpflow/actors/guard"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// Target is where a capability executes: a tool on a connection, or a
// platform built-in.
type Target struct {
	Connection string
	Tool       string
	Builtin    workflow.BuiltinFunc
}

// Spec is everything a run actor needs.
type Spec struct {
	// Record is the new run, status running.
	Record  store.Run
	Plan    workflow.Plan
	Targets map[string]Target
	Input   workflow.Object
	// Supervisor routes tool calls to session actors.
	Supervisor *actor.PID
	Store      store.Runs
	// CallTimeout bounds a tool call whose step declares no timeout.
	CallTimeout time.Duration
	// StoreTimeout bounds each store write.
	StoreTimeout time.Duration
	// Started is told once the new run is committed (or could not be):
	// from then on the run survives a crash, so the start may be
	// acknowledged to the client.
	Started reply.To[Started]
	// Done receives the final, committed record.
	Done reply.To[store.Run]
}

// Started reports whether a run's record was committed.
type Started struct {
	Run store.Run
	Err error
}

// Internal messages.
type (
	persisted struct {
		err   error
		final bool
	}
)

// Actor executes one run.
type Actor struct {
	spec    Spec
	engine  *actor.Engine
	self    *actor.PID
	exec    *workflow.Execution
	record  store.Run
	pending *workflow.Call
	corr    uint64
	// finishing is set once the final record is being written.
	finishing bool
	// acknowledged is set once Started was told.
	acknowledged bool
}

// New returns a producer of the run actor for spec.
func New(spec Spec) actor.Producer {
	return func() actor.Receiver { return &Actor{spec: spec, record: spec.Record} }
}

// Receive handles one message.
func (a *Actor) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case actor.Started:
		a.engine, a.self = c.Engine(), c.PID()
		a.start()
	case persisted:
		a.onPersisted(m)
	case session.ToolResult:
		a.onToolResult(m)
	case guard.Panic:
		// Our own code panicked on a message: fail the run rather than
		// leave it waiting forever.
		if !a.finishing {
			a.finish(fmt.Errorf("internal error: %v", m.Value))
		}
	}
}

func (a *Actor) start() {
	exec, err := workflow.NewExecution(a.spec.Plan, a.spec.Input)
	if err != nil {
		a.record.Status, a.record.Error = store.RunFailed, ptr(err.Error())
	}
	a.exec = exec
	a.record.CurrentStep = a.spec.Plan.Start
	rec := a.record
	a.persist(func(ctx context.Context) error { return a.spec.Store.CreateRun(ctx, rec) }, err != nil)
}

// persist runs write off the inbox and reports back.
func (a *Actor) persist(write func(context.Context) error, final bool) {
	engine, self, timeout := a.engine, a.self, a.spec.StoreTimeout
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		engine.Send(self, persisted{err: write(ctx), final: final})
	}()
}

func (a *Actor) onPersisted(m persisted) {
	if m.err != nil {
		slog.Error("run not persisted", "run", a.record.ID, "err", m.err)
		a.acknowledge(fmt.Errorf("store run %s: %w", a.record.ID, m.err))
		a.record.Status, a.record.Error = store.RunFailed, ptr(fmt.Sprintf("store: %v", m.err))
		a.stop()
		return
	}
	a.acknowledge(nil)
	if m.final {
		a.stop()
		return
	}
	a.step()
}

// acknowledge tells Started, once, how the run's creation went.
func (a *Actor) acknowledge(err error) {
	if a.acknowledged {
		return
	}
	a.acknowledged = true
	if a.spec.Started != nil {
		a.spec.Started(Started{Run: a.record, Err: err})
	}
}

// step advances to the next call, or finishes.
func (a *Actor) step() {
	call, ok, err := a.exec.Next()
	switch {
	case err != nil:
		a.finish(err)
		return
	case !ok:
		a.finish(nil)
		return
	}
	target, found := a.spec.Targets[call.Capability]
	if !found {
		a.finish(fmt.Errorf("step %q: capability %q is not bound", call.NodeID, call.Capability))
		return
	}
	a.pending = &call
	a.corr++
	if target.Builtin != nil {
		outcome, output, err := target.Builtin(call.Input)
		if err != nil {
			a.finish(err)
			return
		}
		a.onToolResult(session.ToolResult{CorrelationID: a.corr, Outcome: outcome, Output: output})
		return
	}
	timeout := a.spec.CallTimeout
	if call.TimeoutSeconds != nil && *call.TimeoutSeconds > 0 {
		timeout = time.Duration(*call.TimeoutSeconds) * time.Second
	}
	a.engine.Send(a.spec.Supervisor, session.CallTool{
		CorrelationID: a.corr,
		Connection:    target.Connection,
		Tool:          target.Tool,
		Arguments:     call.Input,
		Deadline:      time.Now().Add(timeout),
		Reply:         reply.Actor[session.ToolResult](a.engine, a.self),
	})
}

func (a *Actor) onToolResult(m session.ToolResult) {
	if a.pending == nil || m.CorrelationID != a.corr {
		return // a late reply to a call this run no longer waits for
	}
	call := *a.pending
	a.pending = nil
	if m.Err != nil {
		a.finish(fmt.Errorf("step %q: %w", call.NodeID, m.Err))
		return
	}
	entry, err := a.exec.Complete(call, m.Outcome, m.Output)
	if err != nil {
		a.finish(err)
		return
	}
	if a.exec.Finished() {
		a.finish(nil) // one commit: the last step with the run's end
		return
	}
	a.record.TraceCount++
	a.record.CurrentStep = entry.NextNodeID
	a.record.State = a.exec.State() // with CurrentStep, the run's checkpoint
	a.record.UpdatedAt = time.Now().UTC()
	rec := a.record
	a.persist(func(ctx context.Context) error {
		return a.spec.Store.RecordProgress(ctx, rec, []workflow.TraceEntry{entry})
	}, false)
}

// finish records the run's end (failed when cause is set) and commits it
// with any trace entries not yet stored (end steps).
func (a *Actor) finish(cause error) {
	a.finishing = true
	a.pending = nil
	if a.exec == nil {
		a.record.Status, a.record.Error = store.RunFailed, ptr(fmt.Sprintf("run %s cannot execute: %v", a.record.ID, cause))
		rec := a.record
		a.persist(func(ctx context.Context) error { return a.spec.Store.RecordProgress(ctx, rec, nil) }, true)
		return
	}
	trace := a.exec.Trace()
	unsaved := trace[min(a.record.TraceCount, len(trace)):]
	a.record.TraceCount = len(trace)
	a.record.CurrentStep = ""
	a.record.State = a.exec.State()
	a.record.UpdatedAt = time.Now().UTC()
	a.record.ResumeReadiness = "not_applicable"
	if cause == nil {
		output, err := a.exec.Output()
		cause = err
		a.record.Output = output
	}
	if cause != nil {
		a.record.Status, a.record.Error, a.record.Output = store.RunFailed, ptr(cause.Error()), nil
	} else {
		a.record.Status, a.record.Outcome = store.RunCompleted, ptr(a.exec.Outcome())
	}
	rec := a.record
	a.persist(func(ctx context.Context) error {
		return a.spec.Store.RecordProgress(ctx, rec, unsaved)
	}, true)
}

// stop answers and ends the actor.
func (a *Actor) stop() {
	if a.spec.Done != nil {
		a.spec.Done(a.record)
	}
	a.engine.Poison(a.self)
}

func ptr[T any](v T) *T { return &v }
