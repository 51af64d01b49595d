package workflow

import "fmt"

// startChild runs a subgraph step: the child workflow's input is built
// from the step's input bindings and checked against the step's and the
// child's input schemas; a new scope runs the child from its start, and
// the step's frame blocks until the child ends.
func (e *Execution) startChild(f *Frame, node *Node) error {
	if node.Workflow == nil {
		return fmt.Errorf("step %q: subgraph names no workflow", node.ID)
	}
	key := node.Workflow.Key()
	child, ok := e.plans[key]
	if !ok {
		return fmt.Errorf("step %q: child workflow %s is not loaded", node.ID, key)
	}
	input, err := resolveInput(node.Input, e.reader(f))
	if err != nil {
		return fmt.Errorf("step %q input: %w", node.ID, err)
	}
	if err := e.validate(node.InputSchema, input, fmt.Sprintf("step %q input", node.ID)); err != nil {
		return err
	}
	if err := e.validate(child.plan.InputSchema, input, fmt.Sprintf("step %q child workflow input", node.ID)); err != nil {
		return err
	}
	scopeID := f.ID + ":subgraph:" + node.ID
	e.snap.Scopes[scopeID] = &Scope{ID: scopeID, Plan: key, Input: input, State: Object{}, Caller: f.ID}
	main := &Frame{ID: scopeID + ":frame", Scope: scopeID, Node: child.plan.Start, Lineage: scopeID + ":root"}
	e.snap.Frames[main.ID] = main
	f.Status = FrameBlocked
	e.enqueue(main)
	return nil
}

// childDone returns a finished child's output to the step that called it:
// the output is checked against the step's output schema, the step's
// output bindings commit it into the caller's state, and the caller routes
// on the child's outcome.
func (e *Execution) childDone(scope *Scope, output Object) error {
	caller := e.snap.Frames[scope.Caller]
	node := e.node(caller)
	delete(e.snap.Frames, scope.ID+":frame")
	delete(e.snap.Scopes, scope.ID)
	if err := e.validate(node.OutputSchema, output, fmt.Sprintf("step %q output", node.ID)); err != nil {
		return e.callerFailed(caller, err)
	}
	changes := Object{}
	if err := e.commitOutput(caller, node.Output, output, changes); err != nil {
		return e.callerFailed(caller, fmt.Errorf("step %q: %w", node.ID, err))
	}
	e.record(caller, node, scope.Input, scope.Outcome, output, changes)
	e.enqueue(caller)
	if err := e.follow(caller, node, scope.Outcome); err != nil {
		return e.callerFailed(caller, err)
	}
	return nil
}

// callerFailed fails the step that called a child: a foreach item's
// failure goes to its loop's policy, any other fails the run.
func (e *Execution) callerFailed(caller *Frame, err error) error {
	e.itemFailed(caller, err)
	return nil
}
