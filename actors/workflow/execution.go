package workflow

import (
	"encoding/json"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/catalog"
)

// rootFrame is the frame id of the top-level workflow scope.
const rootFrame = "root"

// Call is the work an execution needs done before it can go on: invoke one
// capability with a resolved input.
type Call struct {
	NodeID     string
	Capability string
	Input      Object
	// Timeout of the call in seconds, when the step declares one.
	TimeoutSeconds *int
}

// Execution evaluates one plan against one input, a step at a time. It is
// not safe for concurrent use; the run actor owns it.
type Execution struct {
	plan    Plan
	nodes   map[string]Node
	routes  map[string]map[string]string
	input   Object
	state   Object
	current string // node to execute next; "" once finished
	outcome string
	trace   []TraceEntry
}

// NewExecution checks the plan's structure and positions the execution at
// its start node.
func NewExecution(plan Plan, input Object) (*Execution, error) {
	if diags := CheckPlan(plan); len(diags) > 0 {
		return nil, fmt.Errorf("invalid plan: %s: %s", diags[0].Path, diags[0].Message)
	}
	e := &Execution{
		plan:    plan,
		nodes:   make(map[string]Node, len(plan.Nodes)),
		routes:  make(map[string]map[string]string, len(plan.Nodes)),
		input:   input,
		state:   Object{},
		current: plan.Start,
	}
	if e.input == nil {
		e.input = Object{}
	}
	for _, n := range plan.Nodes {
		e.nodes[n.ID] = n
	}
	for _, edge := range plan.Edges {
		if e.routes[edge.From] == nil {
			e.routes[edge.From] = map[string]string{}
		}
		e.routes[edge.From][edge.Outcome] = edge.To
	}
	return e, nil
}

// Next returns the call the execution is waiting for. End steps are taken
// on the way without a call. ok is false once the workflow has finished.
func (e *Execution) Next() (call Call, ok bool, err error) {
	for e.current != "" {
		node := e.nodes[e.current]
		if node.Type == NodeEnd {
			e.finishAt(node)
			continue
		}
		input, err := e.resolveInput(node)
		if err != nil {
			return Call{}, false, fmt.Errorf("step %q: %w", node.ID, err)
		}
		return Call{NodeID: node.ID, Capability: node.Node, Input: input, TimeoutSeconds: node.TimeoutSeconds}, true, nil
	}
	return Call{}, false, nil
}

// finishAt records an end step and stops.
func (e *Execution) finishAt(node Node) {
	outcome := node.Outcome
	if outcome == "" {
		outcome = OutcomeOK
	}
	e.trace = append(e.trace, TraceEntry{
		FrameID: rootFrame, NodeID: node.ID, StepType: NodeEnd,
		ResolvedInput: Object{}, Outcome: outcome, NextNodeID: End,
		Output: Object{}, StateChanges: Object{},
	})
	e.outcome = outcome
	e.current = ""
}

// Complete applies the result of the pending call: on the ok outcome the
// step's output bindings commit into state (a missing output field is an
// error); other outcomes, such as a tool's "error", route without touching
// state. The route for outcome selects the next step. The returned entry is
// the step's trace record.
func (e *Execution) Complete(call Call, outcome string, output Object) (TraceEntry, error) {
	node, ok := e.nodes[e.current]
	if !ok || node.ID != call.NodeID {
		return TraceEntry{}, fmt.Errorf("step %q is not pending", call.NodeID)
	}
	next, ok := e.routes[node.ID][outcome]
	if !ok {
		return TraceEntry{}, fmt.Errorf("step %q: outcome %q has no route", node.ID, outcome)
	}
	if output == nil {
		output = Object{}
	}
	changes := Object{}
	if outcome == OutcomeOK {
		if err := e.commit(node, output, changes); err != nil {
			return TraceEntry{}, err
		}
	}
	entry := TraceEntry{
		FrameID: rootFrame, NodeID: node.ID, StepType: NodeCall,
		ResolvedInput: call.Input, Outcome: outcome, NextNodeID: next,
		Output: output, StateChanges: changes,
	}
	e.trace = append(e.trace, entry)
	if next == End {
		e.outcome = outcome
		e.current = ""
	} else {
		e.current = next
	}
	return entry, nil
}

// commit applies node's output bindings to state, recording each change.
func (e *Execution) commit(node Node, output, changes Object) error {
	for _, b := range node.Output {
		src, err := parseLocalPath(b.Source)
		if err != nil {
			return fmt.Errorf("step %q: %w", node.ID, err)
		}
		v, found := lookup(any(output), src)
		if !found {
			return fmt.Errorf("step %q: output has no field %q for %s", node.ID, b.Source, b.Target)
		}
		dst, err := parseStatePath(b.Target)
		if err != nil {
			return fmt.Errorf("step %q: %w", node.ID, err)
		}
		if err := assign(e.state, dst, v); err != nil {
			return fmt.Errorf("step %q: %w", node.ID, err)
		}
		changes[b.Target] = v
	}
	return nil
}

// Finished reports whether the workflow reached its end.
func (e *Execution) Finished() bool { return e.current == "" }

// Outcome is the workflow outcome once finished.
func (e *Execution) Outcome() string { return e.outcome }

// State is the workflow state committed so far. The caller must not
// modify it, nor read it while the execution advances.
func (e *Execution) State() Object { return e.state }

// Trace returns the steps executed so far.
func (e *Execution) Trace() []TraceEntry { return e.trace }

// Output projects the workflow's public output from its state: the plan's
// output bindings, or else the state fields named in the output schema.
func (e *Execution) Output() (Object, error) {
	out := Object{}
	if len(e.plan.Output) == 0 {
		for _, name := range catalog.Properties(e.plan.OutputSchema) {
			if v, ok := e.state[name]; ok {
				out[name] = v
			}
		}
		return out, nil
	}
	for _, b := range e.plan.Output {
		if err := e.bind(out, b); err != nil {
			return nil, fmt.Errorf("workflow output: %w", err)
		}
	}
	return out, nil
}

// resolveInput builds a step's input payload from its bindings.
func (e *Execution) resolveInput(node Node) (Object, error) {
	in := Object{}
	for _, b := range node.Input {
		if err := e.bind(in, b); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// bind evaluates one input binding into dst.
func (e *Execution) bind(dst Object, b InputBinding) error {
	target, err := parseLocalPath(b.Target)
	if err != nil {
		return err
	}
	var v any
	if b.Path != "" {
		root, parts, err := parseGraphPath(b.Path)
		if err != nil {
			return err
		}
		var found bool
		switch root {
		case RootInput:
			v, found = lookup(any(e.input), parts)
		case RootState:
			v, found = lookup(any(e.state), parts)
		case RootContext:
			v, found = lookup(any(e.context()), parts)
		}
		if !found {
			return fmt.Errorf("path %q has no value", b.Path)
		}
	} else if err := json.Unmarshal(b.Value, &v); err != nil {
		return fmt.Errorf("value for %q: %w", b.Target, err)
	}
	return assign(dst, target, v)
}

// context is what "context.*" paths read.
func (e *Execution) context() Object {
	ctx := Object{"scope_id": rootFrame}
	if n := len(e.trace); n > 0 {
		ctx["prior_outcome"] = e.trace[n-1].Outcome
	}
	return ctx
}
