package workflow

import (
	"errors"
	"fmt"
	"slices"
)

// DefaultInterruptSchema is the request and resume schema of an interrupt
// that declares none.
func DefaultInterruptSchema() Object {
	return Object{"type": "object", "additionalProperties": true}
}

// ErrResume is wrapped by every refusal of a resume: the run stays
// interrupted and nothing changes.
var ErrResume = errors.New("resume refused")

// pause stops frame f at an interrupt node: its request payload is built
// and checked against the request schema, and the run becomes interrupted
// once nothing else is running.
func (e *Execution) pause(f *Frame, node *Node) error {
	payload, err := resolveInput(node.Request, e.reader(f))
	if err != nil {
		return fmt.Errorf("step %q request: %w", node.ID, err)
	}
	reqSchema, resSchema := node.RequestSchema, node.ResumeSchema
	typed := len(reqSchema) > 0 || len(resSchema) > 0
	if len(reqSchema) == 0 {
		reqSchema = DefaultInterruptSchema()
	}
	if len(resSchema) == 0 {
		resSchema = DefaultInterruptSchema()
	}
	if err := e.validate(reqSchema, payload, fmt.Sprintf("step %q request", node.ID)); err != nil {
		return err
	}
	outcomes := node.Outcomes
	if len(outcomes) == 0 {
		outcomes = []string{OutcomeSubmitted}
	}
	in := &Interrupt{
		ID: "interrupt:" + node.ID, FrameID: f.ID, NodeID: node.ID, Kind: node.Kind, Payload: payload,
		Resumable: true, Outcomes: outcomes, RequestSchema: reqSchema, ResumeSchema: resSchema, Typed: typed,
	}
	if scope := e.snap.Scopes[f.Scope]; scope.Caller != "" {
		// Inside a child workflow: the public frame and node are the
		// subgraph step that called it; the route says where it waits.
		caller := e.outermostCaller(scope)
		in.Route = &InterruptRoute{
			FrameID: f.ID, NodeID: node.ID, ScopeID: scope.ID, LineageID: f.Lineage,
			ParentFrameID: scope.Caller, WorkflowRef: e.refOf(scope),
		}
		in.ID, in.FrameID, in.NodeID = "interrupt:"+caller.Node, caller.ID, caller.Node
	}
	f.Interrupt, f.Status, f.PausedAt = in, FrameInterrupted, e.snap.Steps
	entry := e.record(f, node, payload, OutcomeInterrupt, payload, Object{})
	entry.NextNodeID = node.ID
	return nil
}

// outermostCaller is the frame of the root scope's subgraph step that
// (through any nesting) runs scope.
func (e *Execution) outermostCaller(scope *Scope) *Frame {
	caller := e.snap.Frames[scope.Caller]
	for {
		s := e.snap.Scopes[caller.Scope]
		if s.Caller == "" {
			return caller
		}
		caller = e.snap.Frames[s.Caller]
	}
}

// refOf is the workflow ref a child scope runs.
func (e *Execution) refOf(scope *Scope) WorkflowRef {
	caller := e.snap.Frames[scope.Caller]
	if n := e.node(caller); n != nil && n.Workflow != nil {
		return *n.Workflow
	}
	return WorkflowRef{}
}

// Resume continues an interrupted run with a declared outcome and a
// payload that matches the resume schema. A refusal (errors.Is ErrResume)
// changes nothing. On success the resume bindings commit into state, a
// trace entry records the resume, and the frame follows the outcome;
// Advance goes on from there.
func (e *Execution) Resume(outcome string, payload Object) error {
	f := e.pendingInterrupt()
	if e.snap.Status != StatusInterrupted || f == nil {
		return fmt.Errorf("%w: the run is %s, not interrupted", ErrResume, e.snap.Status)
	}
	in := f.Interrupt
	if outcome == "" {
		outcome = in.Outcomes[0]
	}
	if !slices.Contains(in.Outcomes, outcome) {
		return fmt.Errorf("%w: outcome %q is not one of %v", ErrResume, outcome, in.Outcomes)
	}
	if payload == nil {
		payload = Object{}
	}
	node := e.node(f)
	if err := e.validate(in.ResumeSchema, payload, fmt.Sprintf("step %q resume payload", node.ID)); err != nil {
		return fmt.Errorf("%w: %w", ErrResume, err)
	}
	// The commit is all or nothing, so a bad payload leaves the run as it
	// was.
	changes := Object{}
	if err := e.commitOutput(f, node.Resume, payload, changes); err != nil {
		return fmt.Errorf("%w: step %q: %w", ErrResume, node.ID, err)
	}
	e.snap.Status = StatusRunning
	f.Interrupt = nil
	e.record(f, node, payload, outcome, payload, changes)
	e.enqueue(f)
	if err := e.follow(f, node, outcome); err != nil {
		e.fail(err)
	}
	return nil
}
