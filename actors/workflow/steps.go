package workflow

import (
	"fmt"

	"github.com/mcpflow/mcpflow/actors/catalog"
)

// startCall resolves a call node's input and either runs it in place (a
// pure platform node spec) or hands out a Call and waits.
func (e *Execution) startCall(f *Frame, node *Node) error {
	input, err := resolveInput(node.Input, e.reader(f))
	if err != nil {
		return fmt.Errorf("step %q: %w", node.ID, err)
	}
	if c, ok := e.capability(node.Node); ok {
		if err := e.validate(c.InputSchema, input, fmt.Sprintf("step %q input", node.ID)); err != nil {
			return err
		}
	}
	if run, ok := e.opts.Inline(node.Node); ok && run != nil {
		outcome, output, err := run(input)
		if err == nil {
			err = CheckOutputSize(node.Node, output, e.opts.MaxOutputBytes)
		}
		if err != nil {
			return fmt.Errorf("step %q: %w", node.ID, err)
		}
		return e.finishCall(f, node, Call{NodeID: node.ID, Input: input}, Result{Outcome: outcome, Output: output})
	}
	call := Call{
		ID: e.newCallID(), FrameID: f.ID, NodeID: node.ID, Capability: node.Node, Input: input,
		Retry: node.Retry, TimeoutSeconds: node.TimeoutSeconds,
	}
	e.snap.Calls[call.ID] = call
	e.calls = append(e.calls, call)
	f.Status = FrameWaiting
	return nil
}

func (e *Execution) capability(name string) (capabilityContract, bool) {
	if e.opts.Capability == nil {
		return capabilityContract{}, false
	}
	c, ok := e.opts.Capability(name)
	return capabilityContract{InputSchema: c.InputSchema, OutputSchema: c.OutputSchema, Outcomes: c.Outcomes}, ok
}

// capabilityContract is what the execution enforces of a capability.
type capabilityContract struct {
	InputSchema, OutputSchema Object
	Outcomes                  []string
}

// finishCall applies a call's result: the outcome must be declared and
// routed; the output is checked against the capability's output schema
// and its bindings commit into state. A tool's "error" outcome routes
// without touching state: its output is the tool's error report, not the
// declared output. Every other outcome commits, so that the output of a
// routing spec such as wf.std.first_item_maybe ("found") can be bound.
func (e *Execution) finishCall(f *Frame, node *Node, call Call, r Result) error {
	if r.Output == nil {
		r.Output = Object{}
	}
	if r.Outcome == "" {
		r.Outcome = OutcomeOK
	}
	if _, ok := e.plan(f).routes[node.ID][r.Outcome]; !ok {
		return fmt.Errorf("step %q: outcome %q has no route", node.ID, r.Outcome)
	}
	changes := Object{}
	if r.Outcome != OutcomeError && !lostOutcome(r.Outcome) {
		if c, ok := e.capability(node.Node); ok {
			if err := e.validate(c.OutputSchema, r.Output, fmt.Sprintf("step %q output", node.ID)); err != nil {
				return err
			}
		}
		if err := e.commitOutput(f, node.Output, r.Output, changes); err != nil {
			return fmt.Errorf("step %q: %w", node.ID, err)
		}
	}
	entry := e.record(f, node, call.Input, r.Outcome, r.Output, changes)
	entry.Attempts, entry.Generation, entry.Node, entry.Epoch, entry.TaskID = r.Attempts, r.Generation, r.Node, r.Epoch, r.TaskID
	entry.Upstream = r.Upstream
	entry.Content, entry.Error = r.Content, failureReason(r)
	if f.Status == FrameWaiting {
		e.enqueue(f)
	}
	return e.followWith(f, node, r.Outcome, entry.Error)
}

// failureReason is why a call that routed a failure outcome failed: the
// text of a tool's error result, or the error of a lost session; "" for
// any other outcome.
func failureReason(r Result) string {
	switch r.Outcome {
	case OutcomeError:
		return catalog.ToolErrorText(r.Output)
	case OutcomeSessionLost, OutcomeElicitationLost:
		text, _ := r.Output["error"].(string)
		return catalog.BoundReason(text)
	}
	return ""
}

// runCondition evaluates a condition node and routes "true" or "false".
func (e *Execution) runCondition(f *Frame, node *Node) error {
	holds, err := node.Check.eval(e.reader(f))
	if err != nil {
		return fmt.Errorf("step %q: %w", node.ID, err)
	}
	outcome := OutcomeFalse
	if holds {
		outcome = OutcomeTrue
	}
	e.record(f, node, Object{}, outcome, Object{"predicate": holds}, Object{})
	return e.follow(f, node, outcome)
}
