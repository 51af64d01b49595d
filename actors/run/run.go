// Package run owns the run actor: one actor per workflow run (or per
// resumption of one). It drives a workflow.Execution, sends its tool calls
// to the supervisor (which routes each to its connection's session actor),
// keeps its own timers for retries, step timeouts and the run deadline, and
// commits every step to the store before it goes on: a call goes out only
// once the checkpoint that lists it is committed. Nothing waits on I/O
// inside its inbox; store writes and tool calls finish as messages. A new
// run is created in the store, and its start acknowledged, before any of
// its steps runs; steps then run in slices (SliceSteps, SliceTime), each
// committed before the next begins, so that a cancel, the run deadline
// and a Halt are taken between two slices of pure steps (which never wait
// on a call) and what the actor holds unsaved is one slice's trace. A
// commit the store refuses once the run is acknowledged (a full disk) is
// retried with backoff until it lands (commit.go): meanwhile the run is
// what it last committed, to everyone who asks.
package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcpflow/mcpflow/actors/guard"
	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/actors/tracing"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// Target is where a capability executes: a tool on a connection, a
// platform built-in, or (Resource) a resource read on the connection the
// call's input names by logical source.
type Target struct {
	Connection string
	Tool       string
	Builtin    workflow.BuiltinFunc
	Resource   bool
	// Task is the task option of the binding that resolved the tool
	// (store.TaskAuto, store.TaskAlways; "" is auto): see asTask.
	Task string
}

// Spec is everything a run actor needs.
type Spec struct {
	// Record is the run: new (status running, no trace), or an
	// interrupted or recovered one to continue from its checkpoint.
	Record  store.Run
	Program workflow.Program
	Targets map[string]Target
	// Sources resolves the logical source a resource read names to its
	// connection.
	Sources func(logical string) (connection string, ok bool)
	// Scopes are the session scopes of the connections whose binding
	// asks for a session of the deployment's or the run's own
	// (supervisor.DeploymentScope, supervisor.RunScope), by connection;
	// a connection missing here uses its shared session. A run that ends
	// (completed, failed or cancelled) releases its run scopes.
	Scopes map[string]string
	// Strict are the connections whose binding says
	// "on_session_replaced": "fail": a call that would go to another
	// session than the run's earlier calls on it is not sent, and fails
	// (sessions.go).
	Strict map[string]bool
	// Options tune the execution (step budget, schema checks).
	Options workflow.Options
	// Resume, when set, resumes the interrupted Record with this outcome
	// and payload. A refusal is told through Started (errors.Is
	// workflow.ErrResume) and changes nothing.
	Resume *Resume
	// Replay, when set, makes Record a new run that forks another
	// (workflow.Replay): its Checkpoint is where the replay stopped, and
	// Replay.Trace the entries the replay made. The run is created with
	// both, before any of its own steps runs, and goes on from there.
	Replay *Replay
	// Deadline ends the run as failed when it passes; zero for none.
	Deadline time.Time
	// Supervisor routes to session actors what no line takes: a tool
	// call whose connection's line is not open (Lines), and every other
	// message for a session.
	Supervisor *actor.PID
	// Lines are the supervisor's direct lines to its session actors,
	// over which tool calls go; nil sends them all to Supervisor.
	Lines *supervisor.Lines
	Store store.Runs
	// CallTimeout bounds a tool call whose step declares no timeout.
	CallTimeout time.Duration
	// StoreTimeout bounds each store write.
	StoreTimeout time.Duration
	// Started is answered (Started) once the run's first record is
	// committed, or could not be: from then on the run survives a crash,
	// so the start may be acknowledged to the client. A new run's first
	// record is committed before any of its steps runs. The zero Address
	// asks for no answer.
	Started reply.Address
	// Done is answered (Stopped) with the record the run stopped with:
	// terminal, or interrupted.
	Done reply.Address
	// Release, when set, is called once, on the actor's goroutine, as the
	// actor stops, after its last store write and before Done is answered:
	// its spawner, the run manager (actors/runs), counts it out of its
	// live runs and its shutdown drain. It is that manager's own
	// bookkeeping, below the API, not an answer: whoever is answered Done
	// finds the run no longer live.
	Release func()
	// Metrics counts runs and times steps; nil records nothing.
	Metrics *metrics.Metrics
	// Live bounds what the run stores of its calls' progress and logs
	// (live.go); the zero value keeps the defaults.
	Live LiveLimits
	// Lost are, for a run recovered after a stop, the calls its
	// checkpoint lists in flight that waited on their server's request
	// (elicitation, sampling) and may not be repeated, by call id, with
	// why: they are not sent again but fail with ErrElicitationLost,
	// which the step may route (upstream.go).
	Lost map[string]string
}

// Replay is what a fork replayed of its parent run before it starts.
type Replay struct {
	Trace []workflow.TraceEntry
}

// Resume is a resume request.
type Resume struct {
	Outcome string
	Payload workflow.Object
}

// Internal messages.
type (
	// answered is an attempt's result as the run uses it: a session's
	// ToolResult, or a built-in's result (which the
	// actor sends itself).
	answered struct {
		corr       uint64
		outcome    string
		output     workflow.Object
		content    []any
		err        error
		generation int64
		instance   string
		node       string
		epoch      int64
		taskID     string
		// input is the server's input_required answer (mrtr.go).
		input *session.InputRequired
	}
	// persisted reports a commit: rec and entries are what it wrote,
	// or would have.
	// live are the live events appended before it (live.go), liveErr
	// why they were not.
	persisted struct {
		err     error
		final   bool
		rec     store.Run
		entries []workflow.TraceEntry
		tasks   []createdTask
		live    []store.RunEvent
		liveErr error
	}
	// retryDue re-sends a call after its backoff.
	retryDue struct{ call string }
	// deadlinePassed ends the run at its deadline.
	deadlinePassed struct{}
	// begin starts the run, first in its inbox.
	begin struct{}
)

// Retry backoff: the first retry waits retryBase, each next one twice as
// long, up to retryMax.
const (
	retryBase = 200 * time.Millisecond
	retryMax  = 10 * time.Second
)

// sessionLostRetries bounds how many times a call safe to repeat is sent
// again because its session died under it.
const sessionLostRetries = 8

// A run executes at most SliceSteps steps, for at most SliceTime (once
// it has run one), between two commits: the inbox (a cancel, the
// deadline, a Halt) is read between two slices, and the trace a run
// holds unsaved is at most one slice's.
const (
	SliceSteps = 1000
	SliceTime  = 50 * time.Millisecond
)

// inflight is a call out to a session actor (or waiting for its retry).
type inflight struct {
	call     workflow.Call
	corr     uint64
	attempts int
	// lost counts the attempts whose session died under them.
	lost int
	// retired is set once an attempt was refused unsent by a session
	// actor that stopped (session.ErrRetired) and asked again.
	retired bool
	// started is when its first attempt went out.
	started time.Time
	// conn is the connection its last attempt went to ("" for a
	// built-in).
	conn string
}

// Actor executes one run.
type Actor struct {
	spec   Spec
	engine *actor.Engine
	self   *actor.PID
	exec   *workflow.Execution
	record store.Run
	// unsaved are trace entries not yet committed; ready are the calls
	// waiting for the commit that lists them.
	unsaved []workflow.TraceEntry
	ready   []workflow.Call
	// calls are the calls out, by call id; byCorr maps correlation ids
	// of replies back to call ids.
	calls  map[string]*inflight
	byCorr map[uint64]string
	corr   uint64
	// results are tool results that arrived while a commit was writing.
	results  []answered
	writing  bool
	stopping bool
	// halting is set by Halt: the actor stops after the commit in
	// progress, if any.
	halting bool
	// cancelled holds who asked to cancel, answered once committed.
	cancelled    []reply.Address
	acknowledged bool
	// stored is set once the run is in the store: a resumed or recovered
	// run from its start, a new one once its first commit landed. Only a
	// stored run counts as started and ended (metrics): a new one whose
	// creation the store refused (its idempotency key taken, say) never
	// existed.
	stored bool
	// committed is the record as the store last accepted it; unwritten,
	// when set, is why the commit of a later state failed, which is then
	// retried (commit.go).
	committed store.Run
	unwritten error
	// commitFailures counts the failed commits in a row; retryTimer
	// schedules the next retry, which is pending until it is written.
	commitFailures int
	retryTimer     *time.Timer
	retryPending   bool
	timers         []*time.Timer
	// trace holds the spans of this incarnation; nil with tracing off.
	trace *tracing.Run
	// asks are the requests upstream servers sent during the run's calls,
	// oldest first: the run is interrupted with the first while its call
	// waits. upstream records each call's requests and their answers for
	// its trace entry. dirty asks for a commit of a changed interrupt.
	asks     []*upstreamAsk
	upstream map[string][]workflow.Object
	dirty    bool
	// waiters are answered (Stopped) when the run next pauses in an
	// upstream interrupt, or stops; resumers (Resumed) once the answer
	// they sent is committed.
	waiters, resumers []reply.Address
	// taskUnsaved are the calls' upstream tasks recorded in the
	// execution and not committed yet (tasks.go).
	taskUnsaved []createdTask
	// live holds the progress and logs of the calls out, not stored yet.
	live live
	// replaced are the session replacements seen since the last commit
	// (sessions.go).
	replaced []store.RunEventSession
}

// New returns a producer of the run actor for spec.
func New(spec Spec) actor.Producer {
	return func() actor.Receiver {
		a := &Actor{spec: spec, record: spec.Record, committed: spec.Record, calls: map[string]*inflight{}, byCorr: map[uint64]string{}, upstream: map[string][]workflow.Object{}}
		if !spec.Done.IsZero() {
			a.waiters = []reply.Address{spec.Done}
		}
		return a
	}
}

// Receive handles one message.
func (a *Actor) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case actor.Started:
		// The run begins from its inbox, ahead of any other message, not
		// here: hollywood runs Started within the spawn, between the two
		// events it broadcasts, and the run's start would make them wake
		// the engine's event stream twice, not once.
		a.engine, a.self = c.Engine(), c.PID()
		a.engine.Send(a.self, begin{})
	case begin:
		a.start()
	case persisted:
		a.onPersisted(m)
	case session.ToolResult:
		a.onAnswer(answerOf(m))
	case session.TaskCreated:
		a.onTaskCreated(m)
	case answered:
		a.onAnswer(m)
	case session.UpstreamRequest:
		a.onUpstreamRequest(m)
	case session.UpstreamWithdrawn:
		a.onUpstreamWithdrawn(m)
	case AnswerInterrupt:
		a.onAnswerInterrupt(m)
	case session.CallProgress:
		a.onCallProgress(m)
	case session.CallLog:
		a.onCallLog(m)
	case liveDue:
		a.onLiveDue()
	case liveAppended:
		a.onLiveAppended(m)
	case retryDue:
		if f := a.calls[m.call]; f != nil && !a.stopping && !a.halting {
			a.send(f)
		}
	case commitDue:
		a.retryCommit()
	case deadlinePassed:
		a.stopExecution(fmt.Errorf("run deadline %s passed", a.spec.Deadline.UTC().Format(time.RFC3339)), "")
	case Cancel:
		a.cancel(m)
	case Halt:
		a.halt()
	case actor.Stopped:
		for _, t := range append(a.timers, a.retryTimer) {
			if t != nil {
				t.Stop()
			}
		}
		a.stopLive()
		a.trace.End(a.record) // stopped from outside: no span stays open
	case guard.Panic:
		// Our own code panicked on a message: fail the run rather than
		// leave it waiting forever.
		if a.exec == nil && !a.stopping {
			a.record.Status, a.record.Error = store.RunFailed, ptr(fmt.Sprintf("internal error: %v", m.Value))
			a.acknowledge(errors.New(*a.record.Error))
			a.stop()
			return
		}
		a.stopExecution(fmt.Errorf("internal error: %v", m.Value), "")
	}
}

// start builds the execution, or restores it from the record's
// checkpoint, and commits the run's first record: a new run is created;
// a resumed or recovered one records its progress and sends again the
// calls its checkpoint lists as in flight.
func (a *Actor) start() {
	// A fork is a fresh run, though its replay gave it a checkpoint.
	fresh := a.record.Checkpoint == nil || a.spec.Replay != nil
	a.stored = !fresh
	var err error
	if a.record.Checkpoint == nil {
		a.exec, err = workflow.NewExecution(a.spec.Program, a.record.Input, a.spec.Options)
	} else {
		a.exec, err = workflow.Restore(a.spec.Program, *a.record.Checkpoint, a.spec.Options)
	}
	if err == nil && a.spec.Resume != nil {
		if IsInputInterrupt(a.record.Interrupt) {
			// The answer to an upstream's input request: the call goes
			// again once its round is answered whole (mrtr.go).
			err = AnswerInput(a.exec, a.record.Interrupt, a.spec.Resume.Outcome, a.spec.Resume.Payload, a.spec.Options.Validate)
			a.dirty = true
		} else {
			err = a.exec.Resume(a.spec.Resume.Outcome, a.spec.Resume.Payload)
		}
		if err != nil {
			// Refused: nothing changed, the run stays as it was.
			a.acknowledge(err)
			a.stopping = true
			a.stop()
			return
		}
	}
	a.trace = tracing.StartRun(a.record, a.spec.Resume != nil)
	if !a.spec.Deadline.IsZero() {
		a.after(time.Until(a.spec.Deadline), deadlinePassed{})
	}
	switch {
	case err != nil:
		a.exec = nil
		a.record.Status, a.record.Error = store.RunFailed, ptr(fmt.Sprintf("run %s cannot execute: %v", a.record.ID, err))
		a.commit(true, fresh)
	case fresh:
		// The run is created before any step runs (a fork's with the
		// steps it replayed): its start is acknowledged once it is
		// (onPersisted), and its first slice of steps follows.
		if a.spec.Replay != nil {
			// A copy: a start tried again (runs.asMember) spawns another
			// actor with the same Replay.
			a.unsaved = slices.Clone(a.spec.Replay.Trace)
		}
		a.commit(false, true)
	default:
		// A call waiting on answers to its input requests goes again
		// only once they are all given.
		a.ready = slices.DeleteFunc(a.exec.Outstanding(), workflow.Call.AwaitsInput)
		a.advance()
	}
}

// statusOf maps an execution's status to a run's.
func statusOf(e *workflow.Execution) string {
	if e == nil {
		return store.RunFailed
	}
	switch e.Status() {
	case workflow.StatusCompleted:
		return store.RunCompleted
	case workflow.StatusFailed:
		return store.RunFailed
	case workflow.StatusInterrupted:
		return store.RunInterrupted
	case workflow.StatusCancelled:
		return store.RunCancelled
	}
	return store.RunRunning
}

// advance runs one slice of the execution and commits what it did; the
// calls it now waits on go out once that commit is done, and the next
// slice, if steps are still ready, runs then (onPersisted), after the
// messages that came meanwhile.
func (a *Actor) advance() {
	if a.exec == nil || a.writing {
		return
	}
	p := a.slice()
	if len(p.Trace) == 0 && len(a.ready) == 0 && !p.More && a.exec.Status() == workflow.StatusRunning && !a.dirty {
		return // waiting on calls already out
	}
	// A run that waits on input requests alone stops, interrupted, as
	// at a workflow interrupt: its resume starts a new actor.
	a.commit(a.exec.Status() != workflow.StatusRunning || a.parked(p), false)
}

// slice runs at most one slice of steps and holds what it did for the
// next commit.
func (a *Actor) slice() workflow.Progress {
	began := time.Now()
	p := a.exec.AdvanceSteps(SliceSteps, func() bool { return time.Since(began) >= SliceTime })
	a.unsaved = append(a.unsaved, p.Trace...)
	a.ready = append(a.ready, p.Calls...)
	return p
}

// checkpoint brings the record up to date with the execution.
func (a *Actor) checkpoint() store.Run {
	r := &a.record
	r.UpdatedAt = time.Now().UTC()
	r.TraceCount += len(a.unsaved)
	if a.exec == nil {
		return *r
	}
	snap := a.exec.Snapshot()
	r.Status = statusOf(a.exec)
	r.Checkpoint = &snap
	r.State = a.exec.State()
	r.CurrentStep = ""
	if out := a.exec.Outstanding(); len(out) > 0 {
		r.CurrentStep = out[0].NodeID
	}
	r.Interrupt = a.exec.Interrupt()
	r.ResumeReadiness = "not_applicable"
	switch r.Status {
	case store.RunCompleted:
		r.Outcome, r.Output = ptr(a.exec.Outcome()), a.exec.Output()
	case store.RunFailed, store.RunCancelled:
		r.Error, r.Output = ptr(a.exec.Err()), nil
	case store.RunInterrupted:
		r.ResumeReadiness = "ready"
	}
	a.upstreamStatus(r)
	a.inputStatus(r)
	return *r
}

// commit writes the record and the unsaved trace entries in one
// transaction, creating the run when create is set. final is set when the
// run stops with this commit.
func (a *Actor) commit(final, create bool) {
	a.dirty = false
	rec := a.checkpoint()
	entries := a.unsaved
	a.unsaved = nil
	tasks := a.taskUnsaved
	a.taskUnsaved = nil
	rec.Replaced, a.replaced = a.replaced, nil
	a.trace.Steps(entries)
	var live []store.RunEvent
	if !create {
		live = a.takeLive(time.Now())
	}
	a.persist(store.Commit{Create: create, Run: rec, Entries: entries, Live: live},
		persisted{final: final, rec: rec, entries: entries, tasks: tasks, live: live})
}

// persist hands c to the store and goes on: the store reports back with
// done's fields, as a message, once c is written (its live events
// first, whose failure does not stop the write). No goroutine of the
// run's waits for it (store.Submit), and the inbox is read meanwhile.
func (a *Actor) persist(c store.Commit, done persisted) {
	a.writing = true
	engine, self := a.engine, a.self
	ctx, cancel := context.WithTimeout(context.Background(), a.spec.StoreTimeout)
	store.Submit(ctx, a.spec.Store, c, func(o store.CommitOutcome) {
		cancel()
		done.err, done.liveErr = o.Err, o.LiveErr
		engine.Send(self, done)
	})
}

func (a *Actor) onPersisted(m persisted) {
	a.writing = false
	a.liveWritten(m.live, m.liveErr)
	if m.err != nil && a.acknowledged && !errors.Is(m.err, store.ErrFenced) {
		a.commitFailed(m)
		return
	}
	if m.err != nil {
		if errors.Is(m.err, store.ErrFenced) {
			// Another node claimed the run while this one was paused or
			// cut off: it is that node's to finish.
			slog.Warn("run claimed by another node; this node stops executing it", "run", a.record.ID)
		} else if errors.Is(m.err, store.ErrNotMember) {
			// Its start or resume may be tried again once the node
			// has rejoined its cluster (the run manager's).
			slog.Warn("run not started: this node's cluster membership lapsed", "run", a.record.ID)
		} else if errors.Is(m.err, store.ErrKeyTaken) {
			// The start answers with the run that holds the key.
			slog.Debug("run not started: another run holds its idempotency key", "run", a.record.ID)
		} else {
			slog.Error("run not persisted", "run", a.record.ID, "err", m.err)
		}
		a.acknowledge(fmt.Errorf("store run %s: %w", a.record.ID, m.err))
		a.record.Status, a.record.Error = store.RunFailed, ptr(fmt.Sprintf("store: %v", m.err))
		a.withdraw()
		a.stop()
		return
	}
	if a.unwritten != nil {
		a.committedAgain()
	}
	a.committed = m.rec
	if !a.stored {
		a.stored = true
		a.spec.Metrics.RunStarted(counted(a.record))
	}
	a.tasksCommitted(m.tasks)
	a.acknowledge(nil)
	if m.final {
		a.stop()
		return
	}
	a.answerWaiters(m.rec)
	if a.halting {
		a.finishHalt()
		return
	}
	for _, c := range a.ready {
		f := &inflight{call: c, started: time.Now()}
		a.calls[c.ID] = f
		a.send(f)
	}
	a.ready = nil
	for _, r := range a.results {
		a.onToolResult(r)
	}
	a.results = nil
	a.advance()
	if len(a.taskUnsaved) > 0 && !a.writing {
		a.commit(false, false) // a task created during the commit
	}
	a.afterWrite()
}

// acknowledge tells Started, once, how the run's first commit went. Its
// record leaves out the checkpoint and the state, which share memory
// with the execution the actor goes on advancing.
func (a *Actor) acknowledge(err error) {
	if a.acknowledged {
		return
	}
	a.acknowledged = true
	to := a.spec.Started
	r := a.record
	r.Checkpoint, r.State = nil, nil
	reply.Send(a.engine, to, Started{CorrelationID: to.Correlation, Run: r, Error: reply.Fail(err)})
}

// send sends one attempt of a call: to its built-in in place, or to the
// session actor of its connection.
func (a *Actor) send(f *inflight) {
	f.attempts++
	a.corr++
	f.corr = a.corr
	a.byCorr[f.corr] = f.call.ID
	if a.lostAsk(f) {
		return
	}
	target, found := a.spec.Targets[f.call.Capability]
	tc := a.trace.Attempt(f.call, f.attempts, target.Connection, target.Builtin == nil)
	if !found {
		a.engine.Send(a.self, answered{corr: f.corr, err: fmt.Errorf("capability %q is not bound", f.call.Capability)})
		return
	}
	if target.Builtin != nil {
		outcome, output, err := target.Builtin(f.call.Input)
		if err == nil {
			err = workflow.CheckOutputSize(f.call.Capability, output, a.spec.Options.MaxOutputBytes)
		}
		a.engine.Send(a.self, answered{corr: f.corr, outcome: outcome, output: output, err: err})
		return
	}
	if target.Resource {
		a.readResource(f, tc)
		return
	}
	f.conn = target.Connection
	args, err := json.Marshal(f.call.Input)
	if err != nil {
		a.engine.Send(a.self, answered{corr: f.corr, err: fmt.Errorf("encode the arguments of %s: %w", target.Tool, err)})
		return
	}
	input, err := inputRetry(f.call)
	if err != nil {
		a.engine.Send(a.self, answered{corr: f.corr, err: err})
		return
	}
	a.spec.Lines.Call(a.engine, a.spec.Supervisor, session.CallTool{
		Connection:  target.Connection,
		Tool:        target.Tool,
		Arguments:   args,
		Deadline:    time.Now().Add(a.callTimeout(f.call)),
		Owner:       a.record.ID,
		Scope:       a.spec.Scopes[target.Connection],
		Expect:      a.expect(target.Connection),
		Reply:       reply.At(a.self, f.corr),
		TraceParent: tc.TraceParent,
		TraceState:  tc.TraceState,
		Task:        a.taskCall(f, target),
		Reports:     true,
		// A sampling request the source forwards goes to the MCP client
		// that started the run, if one that samples did.
		ClientSampling: a.record.ClientSampling,
		Input:          input,
	})
}

// answerOf turns a session's answer into the run's: its failure back
// into an error. Its output is go-sdk's decoded object, which the run
// hands to the execution as it is: nothing encodes it again until the
// commit that stores it.
func answerOf(m session.ToolResult) answered {
	r := answered{corr: m.CorrelationID, outcome: m.Outcome, err: m.Error.Err(), generation: m.Generation, instance: m.Instance, node: m.Node, epoch: m.Epoch, taskID: m.TaskID, input: m.Input}
	if r.err == nil {
		r.output, r.content = m.Output, m.Content
	}
	return r
}

// onAnswer takes an attempt's result: at once, or after the commit in
// progress.
func (a *Actor) onAnswer(m answered) {
	if a.writing {
		a.results = append(a.results, m)
		return
	}
	a.onToolResult(m)
	a.advance()
}

// callTimeout bounds one attempt of c: its step's timeout_seconds, or
// CallTimeout.
func (a *Actor) callTimeout(c workflow.Call) time.Duration {
	if s := c.TimeoutSeconds; s != nil && *s > 0 {
		return time.Duration(*s) * time.Second
	}
	return a.spec.CallTimeout
}

// onToolResult hands a call's result to the execution, or retries a
// failed attempt when the step allows more.
func (a *Actor) onToolResult(m answered) {
	id, ok := a.byCorr[m.corr]
	if !ok {
		return // a late reply to an attempt this run no longer waits for
	}
	delete(a.byCorr, m.corr)
	f := a.calls[id]
	if f == nil || f.corr != m.corr || a.exec == nil {
		return
	}
	a.sawSession(f.conn, m)
	if m.input != nil && m.err == nil {
		// The server asked for input: the call waits on its answers.
		if m.err = a.onInputRequired(id, f, m.input); m.err == nil {
			return
		}
	}
	lost := errors.Is(m.err, session.ErrSessionLost)
	if errors.Is(m.err, context.DeadlineExceeded) {
		m.err = fmt.Errorf("no answer within %s (the step's timeout): %w", a.callTimeout(f.call), m.err)
	}
	switch {
	case errors.Is(m.err, session.ErrRetired) && !f.retired:
		// Never sent: its session actor stopped first. Asked again, once,
		// of the connection's next session actor (over its line, or
		// through the supervisor).
		f.retired = true
		if a.halting || a.stopping {
			return // stays outstanding: a restart repeats it
		}
		slog.Info("call asked again of the connection's next session actor", "run", a.record.ID, "step", f.call.NodeID, "attempt", f.attempts, "err", m.err)
		a.send(f)
		return
	case lost && a.safeToRepeat(f.call) && f.lost < sessionLostRetries:
		// Safe to repeat: sent again at once; the session actor holds it
		// until its new session is open.
		f.lost++
		if a.halting || a.stopping {
			return // stays outstanding: a restart repeats it
		}
		slog.Info("call sent again on a new session", "run", a.record.ID, "step", f.call.NodeID, "attempt", f.attempts, "err", m.err)
		a.forgetTask(f)
		a.send(f)
		return
	case lost:
		// Not safe to repeat (it may have run): the step's own retry does
		// not apply; the workflow routes session_lost, or the step fails.
	case m.err != nil && f.call.Retry != nil && f.attempts <= *f.call.Retry && retryable(m.err):
		backoff := min(retryBase<<(f.attempts-1), retryMax)
		slog.Info("step retry", "run", a.record.ID, "step", f.call.NodeID, "attempt", f.attempts, "err", m.err, "backoff", backoff)
		a.after(backoff, retryDue{call: id})
		return
	}
	delete(a.calls, id)
	a.endLive(id)
	if m.err == nil && a.spec.Targets[f.call.Capability].Resource {
		m.output, m.err = ResourceOutput(f.call.Input, m.output)
	}
	r := workflow.Result{Outcome: m.outcome, Output: m.output, Content: m.content, Err: m.err, Attempts: f.attempts, Generation: m.generation, Node: m.node, Epoch: m.epoch, Upstream: append(inputExchanges(f.call, f.conn), a.dropAsks(id)...), TaskID: m.taskID}
	switch {
	case lost && a.exec.Routes(id, workflow.OutcomeSessionLost):
		r.Outcome, r.Output, r.Err = workflow.OutcomeSessionLost, workflow.Object{"error": m.err.Error()}, nil
	case errors.Is(m.err, ErrElicitationLost) && a.exec.Routes(id, workflow.OutcomeElicitationLost):
		r.Outcome, r.Output, r.Err = workflow.OutcomeElicitationLost, workflow.Object{"error": m.err.Error()}, nil
	case lost && f.attempts > 1:
		// The error keeps starting with "session_lost:".
		r.Err = fmt.Errorf("%w (after %d attempts)", m.err, f.attempts)
	case m.err != nil && f.attempts > 1:
		r.Err = fmt.Errorf("after %d attempts: %w", f.attempts, m.err)
	}
	a.observeStep(f, r)
	a.trace.Finished(f.call, r)
	_ = a.exec.Complete(id, r)
}

// retryable reports whether a failed attempt may be retried under its
// step's retry: not one its owner cancelled, nor one whose answer or
// output was too large (it would most likely be as large again, and
// cost the upstream as much), nor one refused because the session it
// expected was replaced (the state it counted on is gone for good), nor
// one whose server's request died with mcpflow's process (it may have
// run).
func retryable(err error) bool {
	return !errors.Is(err, session.ErrCancelled) && !errors.Is(err, session.ErrResultTooLarge) && !errors.Is(err, workflow.ErrOutputTooLarge) &&
		!errors.Is(err, session.ErrSessionReplaced) && !errors.Is(err, ErrInputRounds) && !errors.Is(err, ErrSamplingDeclined) &&
		!errors.Is(err, ErrElicitationLost)
}

// safeToRepeat reports whether call may be sent again after an attempt
// whose outcome is unknown: a built-in, a resource read, or a tool
// annotated readOnlyHint or idempotentHint.
func (a *Actor) safeToRepeat(call workflow.Call) bool {
	if t := a.spec.Targets[call.Capability]; t.Builtin != nil || t.Resource {
		return true
	}
	if a.spec.Options.Capability == nil {
		return false
	}
	c, ok := a.spec.Options.Capability(call.Capability)
	return ok && c.SafeToRepeat
}

// cancel ends the run as cancelled: calls in flight are cancelled
// upstream, queued ones withdrawn, and the trace keeps where it stopped.
//
// While a commit is being retried, the cancel is taken (nothing more goes
// out, and the retry writes the run cancelled) but the run stays what it
// last committed until that lands: Reply is answered at once with that
// record and why it is not written yet (Stopped.Unwritten).
func (a *Actor) cancel(m Cancel) {
	if !m.Reply.IsZero() {
		a.cancelled = append(a.cancelled, m.Reply)
	}
	reason := "cancelled"
	if m.Reason != "" {
		reason = "cancelled: " + m.Reason
	}
	a.stopExecution(nil, reason)
	a.answerUnwritten()
}

// halt starts a Halt: at once when no commit is in progress, else once
// it is done (onPersisted). A run already stopping finishes as it was.
func (a *Actor) halt() {
	if a.unwritten != nil && !a.halting {
		// The store keeps the run as last committed; the next start
		// recovers it from there. A retry under way reports first.
		a.halting = true
		if a.retryPending {
			a.stop()
		}
		return
	}
	if a.exec == nil || a.stopping || a.halting {
		return
	}
	a.halting = true
	if !a.writing {
		a.stop()
	}
}

// finishHalt ends a Halt once no commit is in progress. The results of
// calls that returned during the commit are known outcomes: they are
// committed, with what the execution did with them, before the actor
// stops (a call the execution now wants stays listed, unsent). A call
// that failed without a result (its session closing, for one) stays
// listed as in flight: its step is neither failed nor retried here. With
// nothing to commit, the actor stops now.
func (a *Actor) finishHalt() {
	known := 0
	for _, r := range a.results {
		if r.err == nil {
			a.onToolResult(r)
			known++
		}
	}
	a.results = nil
	if known == 0 && len(a.taskUnsaved) == 0 {
		a.stop()
		return
	}
	a.slice()
	a.commit(true, false)
}

// stopExecution ends a running execution from outside: failed with err,
// or cancelled with reason. A halting run is left as its last commit has
// it: the next start recovers it.
func (a *Actor) stopExecution(err error, reason string) {
	if a.exec == nil || a.stopping || a.halting {
		return
	}
	switch a.exec.Status() {
	case workflow.StatusRunning, workflow.StatusInterrupted:
	default:
		return
	}
	if steps := a.stepsInFlight(); steps != "" {
		if err != nil {
			err = fmt.Errorf("%w, while %s was running", err, steps)
		} else {
			reason = fmt.Sprintf("%s, while %s was running", reason, steps)
		}
	}
	if err != nil {
		a.exec.Stop(err)
	} else {
		a.exec.Cancel(reason)
	}
	a.withdraw()
	a.ready = nil
	if !a.writing {
		a.commit(true, false)
	}
	// else: the commit in progress is followed by advance, which commits
	// the stopped execution as final.
}

// stepsInFlight names the steps whose calls are out, for the record of
// where a stopped run stopped.
func (a *Actor) stepsInFlight() string {
	var names []string
	for _, c := range a.exec.Outstanding() {
		if q := strconv.Quote(c.NodeID); !slices.Contains(names, q) {
			names = append(names, "step "+q)
		}
	}
	return strings.Join(names, ", ")
}

// withdraw cancels every call out, upstream and in the session queues.
func (a *Actor) withdraw() {
	a.stopping = true
	a.endAllLive()
	seen := map[string]bool{}
	for _, f := range a.calls {
		t := a.spec.Targets[f.call.Capability]
		if t.Connection != "" && !seen[t.Connection] {
			seen[t.Connection] = true
			// A halt leaves the calls' upstream tasks running: the next
			// start polls them again (tasks.go).
			a.engine.Send(a.spec.Supervisor, session.CancelCalls{Connection: t.Connection, Owner: a.record.ID, Scope: a.spec.Scopes[t.Connection], KeepTasks: a.halting})
		}
	}
	clear(a.calls)
	clear(a.byCorr)
}

// after sends msg to the actor itself once d has passed.
func (a *Actor) after(d time.Duration, msg any) {
	engine, self := a.engine, a.self
	a.timers = append(a.timers, time.AfterFunc(d, func() { engine.Send(self, msg) }))
}

// stop answers and ends the actor. A run whose last commit failed ends
// as the store has it: its state since is lost with the actor.
func (a *Actor) stop() {
	if !a.stopping {
		a.withdraw()
	}
	if a.unwritten != nil {
		a.record = a.committed
	}
	a.releaseScopes()
	if a.stored {
		a.spec.Metrics.RunEnded(counted(a.record), a.record.Status)
	}
	a.trace.End(a.record)
	if a.spec.Release != nil {
		a.spec.Release()
	}
	for _, to := range append(a.cancelled, a.waiters...) {
		reply.Send(a.engine, to, Stopped{CorrelationID: to.Correlation, Run: a.record})
	}
	for _, to := range a.resumers {
		reply.Send(a.engine, to, Resumed{CorrelationID: to.Correlation, Run: a.record})
	}
	a.engine.Poison(a.self)
}

// releaseScopes closes the run's own sessions once it has ended. An
// interrupted run keeps them for its resume; a halted one (still running)
// leaves them to the shutdown that halted it.
func (a *Actor) releaseScopes() {
	switch a.record.Status {
	case store.RunCompleted, store.RunFailed, store.RunCancelled:
	default:
		return
	}
	released := map[string]bool{}
	for _, scope := range a.spec.Scopes {
		if supervisor.IsRunScope(scope) && !released[scope] {
			released[scope] = true
			a.engine.Send(a.spec.Supervisor, supervisor.ReleaseScope{Scope: scope})
		}
	}
}

func ptr[T any](v T) *T { return &v }
