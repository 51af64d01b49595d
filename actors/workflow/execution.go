package workflow

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/workflow/std"
)

// DefaultMaxSteps is the step budget of a run that sets none.
const DefaultMaxSteps = 10000

// ErrStepBudget means a run executed as many steps as its budget allows.
var ErrStepBudget = errors.New("step budget exhausted")

// Program is a root plan with every child plan its subgraphs reference,
// by WorkflowRef key.
type Program struct {
	Root     Plan
	Children map[string]Plan
	// plans are Root (key "") and Children checked and indexed for
	// execution, once, by Prepare; nil until then.
	plans map[string]*compiled
}

// Prepare checks every plan of p and indexes it for execution, once: the
// executions of the program it returns skip that work. A prepared program
// is immutable, and its executions share it.
func (p Program) Prepare() (Program, error) {
	plans, err := compileProgram(p)
	if err != nil {
		return Program{}, err
	}
	p.plans = plans
	return p, nil
}

// compileProgram compiles the root plan (key "") and each child plan.
func compileProgram(p Program) (map[string]*compiled, error) {
	root, err := compilePlan(p.Root)
	if err != nil {
		return nil, err
	}
	plans := make(map[string]*compiled, 1+len(p.Children))
	plans[""] = root
	for key, child := range p.Children {
		c, err := compilePlan(child)
		if err != nil {
			return nil, fmt.Errorf("subgraph %s: %w", key, err)
		}
		plans[key] = c
	}
	return plans, nil
}

// Options tune an execution.
type Options struct {
	// MaxSteps is the step budget (DefaultMaxSteps when 0).
	MaxSteps int
	// Capability finds a capability's contract; its input and output
	// schemas are enforced at each call step. Nil skips those checks.
	Capability Lookup
	// Validate checks an instance against a JSON Schema. Nil skips every
	// schema check.
	Validate func(schema Object, instance any) error
	// Inline lists capabilities the execution runs itself, without a
	// Call: pure platform node specs. Nil runs every std node spec inline.
	Inline func(name string) (std.Func, bool)
	// MaxOutputBytes bounds the output of each step Inline runs, as its
	// JSON's length (DefaultMaxOutputBytes when 0): a larger one fails
	// the step with ErrOutputTooLarge.
	MaxOutputBytes int64
}

// Lookup finds a capability by qualified name.
type Lookup func(name string) (catalog.Capability, bool)

// compiled is a plan indexed for execution.
type compiled struct {
	plan   Plan
	nodes  map[string]*Node
	routes map[string]map[string]string
}

func compilePlan(p Plan) (*compiled, error) {
	if diags := errorsOnly(CheckPlan(p)); len(diags) > 0 {
		return nil, fmt.Errorf("invalid plan %q: %s: %s", p.Name, diags[0].Path, diags[0].Message)
	}
	c := &compiled{plan: p, nodes: make(map[string]*Node, len(p.Nodes)), routes: make(map[string]map[string]string, len(p.Nodes))}
	for i := range p.Nodes {
		c.nodes[p.Nodes[i].ID] = &p.Nodes[i]
	}
	for _, e := range p.Edges {
		if c.routes[e.From] == nil {
			c.routes[e.From] = map[string]string{}
		}
		c.routes[e.From][e.Outcome] = e.To
	}
	return c, nil
}

// Execution evaluates one program as a deterministic state machine. It
// runs every ready frame until each waits on a call, a child, or a resume;
// the driver performs the calls and hands their results back. It is not
// safe for concurrent use; the run actor owns it.
type Execution struct {
	plans map[string]*compiled
	opts  Options
	snap  Snapshot
	// trace and calls collect what Advance returns.
	trace []TraceEntry
	calls []Call
	// sliceStart and sliceEnd are the step counts at which the Advance
	// in progress began and stops (sliceEnd 0: none), and enough is asked
	// after each of its steps whether to stop (nil: never); cut is set
	// when it stopped early with a frame still ready.
	sliceStart, sliceEnd int
	enough               func() bool
	cut                  bool
}

// NewExecution checks the program and its input, and queues the root
// frame at the start node.
func NewExecution(p Program, input Object, opts Options) (*Execution, error) {
	e, err := newExecution(p, opts)
	if err != nil {
		return nil, err
	}
	if input == nil {
		input = Object{}
	}
	if err := e.validate(p.Root.InputSchema, input, "workflow input"); err != nil {
		return nil, err
	}
	e.snap = Snapshot{
		Status: StatusRunning,
		Scopes: map[string]*Scope{rootScope: {ID: rootScope, Input: input, State: Object{}}},
		Frames: map[string]*Frame{rootFrame: {ID: rootFrame, Scope: rootScope, Node: p.Root.Start, Status: FrameReady, Lineage: rootFrame}},
		Ready:  []string{rootFrame},
		Calls:  map[string]Call{},
	}
	return e, nil
}

// Restore continues an execution from a snapshot, such as a checkpoint.
func Restore(p Program, snap Snapshot, opts Options) (*Execution, error) {
	e, err := newExecution(p, opts)
	if err != nil {
		return nil, err
	}
	if snap.Scopes[rootScope] == nil || snap.Frames[rootFrame] == nil {
		return nil, errors.New("restore: snapshot has no root frame")
	}
	if snap.Calls == nil {
		snap.Calls = map[string]Call{}
	}
	e.snap = snap
	return e, nil
}

func newExecution(p Program, opts Options) (*Execution, error) {
	if opts.MaxSteps <= 0 {
		opts.MaxSteps = DefaultMaxSteps
	}
	if opts.Inline == nil {
		opts.Inline = std.Runner
	}
	if opts.MaxOutputBytes <= 0 {
		opts.MaxOutputBytes = DefaultMaxOutputBytes
	}
	plans := p.plans
	if plans == nil {
		var err error
		if plans, err = compileProgram(p); err != nil {
			return nil, err
		}
	}
	return &Execution{plans: plans, opts: opts}, nil
}

// Progress is what one Advance produced: the trace entries of the steps it
// executed and the calls it now waits on. Both must be committed before
// the calls are made.
type Progress struct {
	Trace []TraceEntry
	Calls []Call
	// More is set when a slice (AdvanceSteps) ended with frames still
	// ready: the next Advance goes on with them.
	More bool
}

// Advance runs every ready frame as far as it goes.
func (e *Execution) Advance() Progress { return e.AdvanceSteps(0, nil) }

// AdvanceSteps is Advance in a slice of at most n steps (unbounded when
// n <= 0) that also ends once enough, asked after each step (nil:
// never), says so: the driver's bound on the slice's time, say. A slice
// runs at least one step. A frame cut short stays first in the ready
// queue, so that slices run the steps in the order one Advance would:
// pure steps that never wait on a call (a step routing back to itself)
// run in bounded slices, and the driver can take other work between
// them.
func (e *Execution) AdvanceSteps(n int, enough func() bool) Progress {
	e.sliceStart, e.sliceEnd, e.enough, e.cut = e.snap.Steps, 0, enough, false
	defer func() { e.enough = nil }()
	if n > 0 {
		e.sliceEnd = e.snap.Steps + n
	}
	for len(e.snap.Ready) > 0 && e.snap.Status == StatusRunning && !e.cut {
		id := e.snap.Ready[0]
		e.snap.Ready = e.snap.Ready[1:]
		if f := e.snap.Frames[id]; f != nil && f.Status == FrameReady {
			if err := e.run(f); err != nil {
				e.fail(err)
			}
		}
		if e.cut && e.snap.Status == StatusRunning {
			e.snap.Ready = slices.Insert(e.snap.Ready, 0, id)
		}
	}
	more := e.snap.Status == StatusRunning && len(e.snap.Ready) > 0
	if e.snap.Status == StatusRunning && !more && len(e.snap.Calls) == 0 && e.pendingInterrupt() != nil {
		e.snap.Status = StatusInterrupted
	}
	p := Progress{Trace: e.trace, Calls: e.calls, More: more}
	e.trace, e.calls = nil, nil
	return p
}

// Complete hands back the result of a call. The frame that waited on it
// goes back to the ready queue; Advance goes on from there.
func (e *Execution) Complete(callID string, r Result) error {
	call, ok := e.snap.Calls[callID]
	if !ok {
		return fmt.Errorf("call %q is not outstanding", callID)
	}
	delete(e.snap.Calls, callID)
	if e.snap.Status != StatusRunning {
		return nil
	}
	f := e.snap.Frames[call.FrameID]
	node := e.node(f)
	if r.Err != nil {
		e.itemFailed(f, fmt.Errorf("step %q: %w", node.ID, r.Err))
		return nil
	}
	if err := e.finishCall(f, node, call, r); err != nil {
		e.itemFailed(f, err)
	}
	return nil
}

// SetTask records, in the snapshot, the upstream task outstanding call
// callID runs as (nil: none, as for an attempt that makes a new one).
func (e *Execution) SetTask(callID string, t *Task) error {
	return e.amendCall(callID, func(c *Call) { c.Task = t })
}

// SetInput records, in the snapshot, the input round outstanding call
// callID waits on (nil: none).
func (e *Execution) SetInput(callID string, in *InputRound) error {
	return e.amendCall(callID, func(c *Call) { c.Asked = in })
}

// amendCall changes outstanding call callID in the snapshot.
func (e *Execution) amendCall(callID string, change func(*Call)) error {
	call, ok := e.snap.Calls[callID]
	if !ok {
		return fmt.Errorf("call %q is not outstanding", callID)
	}
	change(&call)
	e.snap.Calls[callID] = call
	return nil
}

// Routes reports whether the step that made outstanding call callID
// routes outcome: a driver asks it before it completes a call with an
// outcome the step may not route, such as OutcomeSessionLost.
func (e *Execution) Routes(callID, outcome string) bool {
	call, ok := e.snap.Calls[callID]
	if !ok {
		return false
	}
	f := e.snap.Frames[call.FrameID]
	if f == nil {
		return false
	}
	_, ok = e.plan(f).routes[f.Node][outcome]
	return ok
}

// Cancel ends the execution as cancelled, with reason; outstanding calls
// are dropped (the driver withdraws them).
func (e *Execution) Cancel(reason string) {
	if e.snap.Status == StatusRunning || e.snap.Status == StatusInterrupted {
		e.snap.Status, e.snap.Error, e.snap.Ready = StatusCancelled, reason, nil
		e.snap.Calls = map[string]Call{}
	}
}

// Stop ends the execution as failed, with err: a limit the driver
// enforces, such as the run deadline.
func (e *Execution) Stop(err error) {
	e.fail(err)
	e.snap.Calls = map[string]Call{}
}

// Outstanding lists the calls handed out and not yet completed.
func (e *Execution) Outstanding() []Call {
	out := make([]Call, 0, len(e.snap.Calls))
	for _, id := range SortedKeys(e.snap.Calls) {
		out = append(out, e.snap.Calls[id])
	}
	return out
}

// Snapshot returns the execution's state. It shares memory with the
// execution: encode it before the execution advances again.
func (e *Execution) Snapshot() Snapshot { return e.snap }

// Status is running, completed, failed or interrupted.
func (e *Execution) Status() string { return e.snap.Status }

// Outcome is the workflow outcome once completed.
func (e *Execution) Outcome() string { return e.snap.Outcome }

// Err is why the execution failed, once it has.
func (e *Execution) Err() string { return e.snap.Error }

// Output is the workflow's public output once completed.
func (e *Execution) Output() Object { return e.snap.Output }

// State is the root workflow state committed so far.
func (e *Execution) State() Object { return e.snap.Scopes[rootScope].State }

// Steps is how many steps have executed.
func (e *Execution) Steps() int { return e.snap.Steps }

// Interrupt is the pause the run waits in, once interrupted.
func (e *Execution) Interrupt() *Interrupt {
	if f := e.pendingInterrupt(); f != nil {
		return f.Interrupt
	}
	return nil
}

// pendingInterrupt is the interrupted frame that paused first.
func (e *Execution) pendingInterrupt() *Frame {
	var first *Frame
	for _, f := range e.snap.Frames {
		if f.Status == FrameInterrupted && (first == nil || f.PausedAt < first.PausedAt) {
			first = f
		}
	}
	return first
}

// fail ends the execution.
func (e *Execution) fail(err error) {
	if e.snap.Status != StatusRunning && e.snap.Status != StatusInterrupted {
		return
	}
	e.snap.Status, e.snap.Error = StatusFailed, err.Error()
	e.snap.Ready = nil
}

// plan is the compiled plan of frame f's scope.
func (e *Execution) plan(f *Frame) *compiled { return e.plans[e.snap.Scopes[f.Scope].Plan] }

// node is frame f's current node.
func (e *Execution) node(f *Frame) *Node { return e.plan(f).nodes[f.Node] }

// enqueue marks f ready.
func (e *Execution) enqueue(f *Frame) {
	f.Status = FrameReady
	e.snap.Ready = append(e.snap.Ready, f.ID)
}

// run executes frame f's steps until it waits, blocks, pauses or ends.
func (e *Execution) run(f *Frame) error {
	for f.Status == FrameReady {
		if e.snap.Steps >= e.opts.MaxSteps {
			return fmt.Errorf("%w: %d steps executed, the next would be %q", ErrStepBudget, e.snap.Steps, f.Node)
		}
		if e.sliceUsed() {
			e.cut = true // f stays ready
			return nil
		}
		node := e.node(f)
		if node == nil {
			return fmt.Errorf("frame %s: node %q does not exist", f.ID, f.Node)
		}
		e.snap.Steps++
		var err error
		switch node.Type {
		case NodeCall:
			err = e.startCall(f, node)
		case NodeCondition:
			err = e.runCondition(f, node)
		case NodeForeach:
			err = e.startLoop(f, node)
		case NodeJoin:
			e.record(f, node, Object{}, OutcomeDone, Object{}, Object{})
			err = e.follow(f, node, OutcomeDone)
		case NodeEnd:
			if f.Item != nil {
				err = fmt.Errorf("step %q: a foreach body ends by routing back to its foreach %q, not at an end step", node.ID, f.Item.Loop)
				break
			}
			e.record(f, node, Object{}, node.Outcome, Object{}, Object{})
			err = e.endFrame(f, node.Outcome)
		case NodeInterrupt:
			err = e.pause(f, node)
		case NodeSubgraph:
			err = e.startChild(f, node)
		default:
			err = fmt.Errorf("node %q has unknown type %q", node.ID, node.Type)
		}
		if err != nil {
			// A foreach item's policy decides, else the run fails.
			e.itemFailed(f, err)
			return nil
		}
	}
	return nil
}

// sliceUsed reports whether the Advance in progress has run its steps,
// or long enough, once it has run one.
func (e *Execution) sliceUsed() bool {
	ran := e.snap.Steps - e.sliceStart
	return ran > 0 && (e.sliceEnd > 0 && e.snap.Steps >= e.sliceEnd || e.enough != nil && e.enough())
}

// record appends a trace entry for f's node and returns it for amending.
func (e *Execution) record(f *Frame, node *Node, input Object, outcome string, output, changes Object) *TraceEntry {
	next := e.plan(f).routes[node.ID][outcome]
	if node.Type == NodeEnd || next == "" {
		next = End
	}
	e.trace = append(e.trace, TraceEntry{
		FrameID: f.ID, NodeID: node.ID, StepType: node.Type, ResolvedInput: input,
		Outcome: outcome, NextNodeID: next, Output: output, StateChanges: changes,
	})
	return &e.trace[len(e.trace)-1]
}

// follow moves f along the edge of outcome.
func (e *Execution) follow(f *Frame, node *Node, outcome string) error {
	return e.followWith(f, node, outcome, "")
}

// followWith moves f along the edge of outcome, which failed for reason
// ("" when it is no failure): the next step reads it as
// context.prior_error.
func (e *Execution) followWith(f *Frame, node *Node, outcome, reason string) error {
	next, ok := e.plan(f).routes[node.ID][outcome]
	if !ok {
		return fmt.Errorf("step %q: outcome %q has no route", node.ID, outcome)
	}
	f.Prior, f.Edge, f.PriorError = outcome, node.ID, reason
	// A foreach item ends where its body routes back to its foreach.
	if f.Item != nil {
		switch next {
		case f.Item.Loop:
			return e.endFrame(f, OutcomeOK)
		case End:
			return fmt.Errorf("step %q: a foreach body ends by routing back to its foreach %q, not to %s", node.ID, f.Item.Loop, End)
		}
	}
	if next == End {
		return e.endFrame(f, OutcomeOK)
	}
	f.Node = next
	return nil
}

// endFrame finishes frame f, which reached an end with outcome.
func (e *Execution) endFrame(f *Frame, outcome string) error {
	f.Status = FrameDone
	if f.Parent != "" {
		return e.itemDone(f)
	}
	scope := e.snap.Scopes[f.Scope]
	scope.Outcome = outcome
	output, err := e.scopeOutput(scope)
	if err != nil {
		return err
	}
	if scope.Caller != "" {
		return e.childDone(scope, output)
	}
	e.snap.Status, e.snap.Outcome, e.snap.Output = StatusCompleted, outcome, output
	return nil
}

// scopeOutput projects a scope's public output: the plan's output
// bindings, or else the state fields its output schema names; then checks
// it against the output schema.
func (e *Execution) scopeOutput(scope *Scope) (Object, error) {
	plan := e.plans[scope.Plan].plan
	out := Object{}
	if len(plan.Output) == 0 {
		for _, name := range catalog.Properties(plan.OutputSchema) {
			if v, ok := scope.State[name]; ok {
				out[name] = v
			}
		}
	} else {
		read := func(p GraphPath) (any, bool) { return readScope(scope, nil, p) }
		for _, b := range plan.Output {
			if err := bindInput(out, b, read); err != nil {
				return nil, fmt.Errorf("workflow output: %w", err)
			}
		}
	}
	return out, e.validate(plan.OutputSchema, out, "workflow output")
}

// validate checks instance against schema, naming what is checked.
func (e *Execution) validate(schema Object, instance any, what string) error {
	if e.opts.Validate == nil || len(schema) == 0 {
		return nil
	}
	if err := e.opts.Validate(schema, instance); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// newCallID allocates a call id.
func (e *Execution) newCallID() string {
	e.snap.NextCall++
	return "c" + strconv.Itoa(e.snap.NextCall)
}
