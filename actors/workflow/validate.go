package workflow

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/suggest"
)

// contextFields are the context.* keys every frame has; foreach items
// also have loop_item, loop_index and their "as" alias.
var contextFields = []string{"prior_outcome", "prior_error", "activated_incoming_edge", "scope_id", "lineage_id", "parent_lineage_id", "loop_item", "loop_index"}

// CheckPlan validates a plan's structure without knowing any capability:
// node and edge shapes, routes, outcomes, reachability and exits.
func CheckPlan(p Plan) []Diagnostic { return ValidatePlan(p, nil) }

// ValidatePlan validates a plan; with a lookup it also checks each call
// node against its capability: that it exists, that its outcomes are
// routed, and that its bindings name fields of its schemas.
func ValidatePlan(p Plan, lookup Lookup) []Diagnostic {
	return (&checker{plan: p, lookup: lookup, names: planNames{}}).run()
}

// ValidateDraft checks a draft: it lowers the steps as Compile does and
// validates the result, reporting each finding at the draft step (or
// route) it comes from.
func ValidateDraft(d Draft, lookup Lookup) []Diagnostic {
	var diags []Diagnostic
	if d.Name == "" {
		diags = append(diags, diag("draft_invalid", "name", "draft needs a name"))
	}
	p := Plan{Name: d.Name, InputSchema: d.InputSchema, StateSchema: d.StateSchema, OutputSchema: d.OutputSchema, Outcomes: d.Outcomes, Output: d.Output, Start: d.Start}
	if len(p.Outcomes) == 0 {
		p.Outcomes = []string{OutcomeOK}
	}
	names := draftNames{nodes: map[string]string{}, checks: map[string]string{}}
	for _, id := range SortedKeys(d.Steps) {
		step := d.Steps[id]
		switch {
		case step.Kind() == "":
			diags = append(diags, stepDiag("draft_invalid", "steps."+id, id, "a step needs one kind key"))
			continue
		case step.Choose != nil && len(step.Choose.Clauses) == 0:
			diags = append(diags, stepDiag("draft_invalid", "steps."+id+".choose.clauses", id, "a choose step needs at least one clause"))
		case step.Match != nil && len(step.Match.Cases) == 0:
			diags = append(diags, stepDiag("draft_invalid", "steps."+id+".match.cases", id, "a match step needs at least one case"))
		}
		nodes, edges := lowerStep(id, step)
		for _, n := range nodes {
			names.nodes[n.ID] = id
		}
		checks, edgePaths := decisionPaths(id, step)
		for nid, at := range checks {
			names.checks[nid] = at
		}
		p.Nodes = append(p.Nodes, nodes...)
		p.Edges = append(p.Edges, edges...)
		names.edges = append(names.edges, edgePaths...)
		for _, e := range edges {
			names.edgeSteps = append(names.edgeSteps, e.From)
		}
		for _, outcome := range SortedKeys(d.Routes[id]) {
			p.Edges = append(p.Edges, Edge{From: id, Outcome: outcome, To: d.Routes[id][outcome]})
			names.edges = append(names.edges, "routes."+id+"."+outcome)
			names.edgeSteps = append(names.edgeSteps, id)
		}
	}
	for _, from := range SortedKeys(d.Routes) {
		if _, ok := d.Steps[from]; !ok {
			for _, outcome := range SortedKeys(d.Routes[from]) {
				p.Edges = append(p.Edges, Edge{From: from, Outcome: outcome, To: d.Routes[from][outcome]})
				names.edges = append(names.edges, "routes."+from+"."+outcome)
				names.edgeSteps = append(names.edgeSteps, from)
			}
		}
	}
	return append(diags, (&checker{plan: p, lookup: lookup, names: names}).run()...)
}

// namer says where a finding stands: in plan terms (nodes[i], edges[i])
// or in draft terms (steps.<id>, routes.<from>.<outcome>). The checker
// writes the fields below a node in draft terms (".use", ".foreach.over");
// field turns them into the namer's terms.
type namer interface {
	node(i int, n Node) (path, step string)
	// id is where node i's id is written; check, where its condition is.
	id(i int, n Node) string
	check(i int, n Node) string
	edge(i int, e Edge) (path, step string)
	field(path string) string
}

type planNames struct{}

func (planNames) node(i int, n Node) (string, string) { return fmt.Sprintf("nodes[%d]", i), n.ID }
func (planNames) id(i int, _ Node) string             { return fmt.Sprintf("nodes[%d].id", i) }
func (planNames) check(i int, _ Node) string          { return fmt.Sprintf("nodes[%d].check", i) }
func (planNames) edge(i int, e Edge) (string, string) { return fmt.Sprintf("edges[%d]", i), e.From }

// field maps a draft-style field of a node to the plan's: a plan node
// holds its kind's fields at top level, and names its capability "node".
func (planNames) field(path string) string {
	end := strings.IndexByte(path, ']')
	if !strings.HasPrefix(path, "nodes[") || end < 0 {
		return path
	}
	head, rest := path[:end+1], path[end+1:]
	if rest == ".use" {
		return head + ".node"
	}
	for _, kind := range []string{".foreach.", ".interrupt.", ".subgraph.", ".end."} {
		if strings.HasPrefix(rest, kind) {
			return head + rest[len(kind)-1:]
		}
	}
	return path
}

type draftNames struct {
	nodes     map[string]string // node id -> step id
	checks    map[string]string // condition node id -> where its condition is written
	edges     []string          // per edge: where it is written
	edgeSteps []string
}

func (d draftNames) node(_ int, n Node) (string, string) {
	step := d.nodes[n.ID]
	return "steps." + step, step
}

// id is the step's key: a draft step has no id field.
func (d draftNames) id(_ int, n Node) string { return "steps." + d.nodes[n.ID] }

func (d draftNames) check(_ int, n Node) string {
	if at, ok := d.checks[n.ID]; ok {
		return at
	}
	return "steps." + d.nodes[n.ID]
}

func (draftNames) field(path string) string { return path }

// decisionPaths says where the conditions and the edges that a when,
// choose or match step lowers to are written in the draft: the checks by
// node id, the edge paths in lowerStep's edge order.
func decisionPaths(id string, s DraftStep) (checks map[string]string, edges []string) {
	at := "steps." + id
	checks = map[string]string{}
	switch {
	case s.When != nil:
		checks[id] = at + ".when.if"
		return checks, []string{at + ".when.then", at + ".when.otherwise"}
	case s.Choose != nil:
		for i := range s.Choose.Clauses {
			clause := fmt.Sprintf("%s.choose.clauses[%d]", at, i)
			checks[ClauseID(id, i)] = clause + ".if"
			next := clause
			if i == len(s.Choose.Clauses)-1 {
				next = at + ".choose.default"
			}
			edges = append(edges, clause+".then", next)
		}
	case s.Match != nil:
		for i := range s.Match.Cases {
			c := fmt.Sprintf("%s.match.cases[%d]", at, i)
			checks[ClauseID(id, i)] = c
			next := c
			if i == len(s.Match.Cases)-1 {
				next = at + ".match.default"
			}
			edges = append(edges, c+".then", next)
		}
	}
	return checks, edges
}

func (d draftNames) edge(i int, e Edge) (string, string) {
	if i < len(d.edges) && d.edges[i] != "" {
		return d.edges[i], d.edgeSteps[i]
	}
	step := d.nodes[e.From]
	return "steps." + step, step
}

// checker accumulates the findings on one plan.
type checker struct {
	plan   Plan
	lookup Lookup
	names  namer
	diags  []Diagnostic
	// outcomes are each node's declared outcomes; nil when unknown.
	outcomes map[string][]string
	// sessionful are the call steps of an MCP tool: they may also route
	// OutcomeSessionLost and OutcomeElicitationLost, which they do not
	// declare.
	sessionful map[string]bool
	aliases    []string
}

func (c *checker) add(code, path, step, message string) {
	c.diags = append(c.diags, stepDiag(code, c.names.field(path), step, message))
}

func (c *checker) run() []Diagnostic {
	p := c.plan
	ids := map[string]bool{}
	c.outcomes = map[string][]string{}
	for _, n := range p.Nodes {
		if n.Type == NodeForeach && n.As != "" {
			c.aliases = append(c.aliases, n.As)
		}
	}
	for i, n := range p.Nodes {
		path, step := c.names.node(i, n)
		switch {
		case n.ID == "" || n.ID == End:
			c.add("invalid_node_id", c.names.id(i, n), step, fmt.Sprintf("node id %q is not allowed", n.ID))
		case ids[n.ID]:
			c.add("duplicate_node_id", c.names.id(i, n), step, fmt.Sprintf("node id %q is used twice", n.ID))
		}
		ids[n.ID] = true
		c.outcomes[n.ID] = c.checkNode(i, path, step, n)
	}
	if !ids[p.Start] {
		c.add("unknown_start", "start", "", fmt.Sprintf("start %q is not a step", p.Start))
	}
	routed := map[[2]string]bool{}
	for i, e := range p.Edges {
		path, step := c.names.edge(i, e)
		if !ids[e.From] {
			c.add("unknown_edge_source", path, step, fmt.Sprintf("route from unknown step %q", e.From))
			continue
		}
		if e.To != End && !ids[e.To] {
			c.add("unknown_edge_destination", path, step, fmt.Sprintf("route %s.%s goes to unknown step %q", e.From, e.Outcome, e.To))
		}
		key := [2]string{e.From, e.Outcome}
		if routed[key] {
			c.add("duplicate_edge", path, step, fmt.Sprintf("outcome %q of %q is routed twice", e.Outcome, e.From))
		}
		routed[key] = true
		if declared := c.outcomes[e.From]; declared != nil && !slices.Contains(declared, e.Outcome) &&
			(!lostOutcome(e.Outcome) || !c.sessionful[e.From]) {
			c.add("undeclared_edge_outcome", path, step, fmt.Sprintf("step %q does not declare outcome %q (it declares %s)", e.From, e.Outcome, strings.Join(declared, ", ")))
		}
		if e.To == End && !slices.Contains(p.Outcomes, OutcomeOK) {
			c.add("undeclared_workflow_outcome", path, step, fmt.Sprintf("route to %s finishes with outcome ok, which the workflow does not declare", End))
		}
		if e.To == End && e.Outcome == OutcomeError {
			d := stepDiag("error_routed_to_end", path, step, fmt.Sprintf(
				"outcome error of step %q goes to %s: a failed call would complete the run with outcome ok, and what it said only in the trace", e.From, End))
			d.Severity = SeverityWarning
			c.diags = append(c.diags, d)
		}
	}
	reachable := c.reachable(ids)
	for i, n := range p.Nodes {
		path, step := c.names.node(i, n)
		if !reachable[n.ID] {
			d := stepDiag("unreachable_step", path, step, fmt.Sprintf("step %q cannot be reached from the start", n.ID))
			d.Severity = SeverityWarning
			c.diags = append(c.diags, d)
			continue
		}
		for _, o := range c.outcomes[n.ID] {
			if o == OutcomeCompletedWithErrors && n.ItemError.action() == ItemFail {
				continue
			}
			if !routed[[2]string{n.ID, o}] {
				c.add("missing_outcome_edge", path, step, fmt.Sprintf("outcome %q of step %q has no route", o, n.ID))
			}
		}
	}
	c.checkExits(reachable)
	c.checkForeachBodies()
	c.checkWorkflowOutput()
	return c.diags
}

// checkNode validates one node and returns its declared outcomes (nil
// when they depend on a capability that is not known).
func (c *checker) checkNode(i int, path, step string, n Node) []string {
	switch n.Type {
	case NodeCall:
		return c.checkCall(path, step, n)
	case NodeCondition:
		at := c.names.check(i, n)
		if n.Check == nil {
			c.add("empty_condition_args", at, step, "a condition needs a check")
		} else if code, msg := n.Check.check(); code != "" {
			c.add(code, at, step, msg)
		} else {
			c.readPaths(at, step, "invalid_condition_path", n.Check.paths())
		}
		return []string{OutcomeTrue, OutcomeFalse}
	case NodeForeach:
		c.checkForeach(path, step, n)
		return []string{OutcomeLoop, OutcomeDone, OutcomeCompletedWithErrors}
	case NodeJoin:
		return []string{OutcomeDone}
	case NodeEnd:
		if !slices.Contains(c.plan.Outcomes, n.Outcome) {
			c.add("undeclared_workflow_outcome", path+".end.outcome", step, fmt.Sprintf("end outcome %q is not a workflow outcome", n.Outcome))
		}
		return []string{}
	case NodeInterrupt:
		if n.Kind == "" {
			c.add("draft_invalid", path+".interrupt.kind", step, "an interrupt needs a kind")
		}
		c.checkInputs(path+".interrupt.request", step, "invalid_interrupt_source", n.Request, nil)
		c.checkOutputs(path+".interrupt.resume", step, "invalid_interrupt_destination", n.Resume, nil)
		if len(n.Outcomes) == 0 {
			return []string{OutcomeSubmitted}
		}
		return n.Outcomes
	case NodeSubgraph:
		if n.Workflow == nil || n.Workflow.Key() == "" {
			c.add("draft_invalid", path+".subgraph.workflow", step, "a subgraph names a workflow: {artifact_id, version} or {name}")
		}
		c.checkInputs(path+".subgraph.input", step, "invalid_source_path", n.Input, n.InputSchema)
		c.checkOutputs(path+".subgraph.output", step, "invalid_destination_path", n.Output, n.OutputSchema)
		if len(n.Outcomes) == 0 {
			return []string{OutcomeOK}
		}
		return n.Outcomes
	}
	c.add("unsupported_step_type", path+".type", step, fmt.Sprintf("node %q has unknown type %q", n.ID, n.Type))
	return nil
}

// checkCall validates a call node against its capability.
func (c *checker) checkCall(path, step string, n Node) []string {
	if n.Node == "" {
		c.add("unknown_node_def", path+".use", step, fmt.Sprintf("step %q names no capability", n.ID))
		return nil
	}
	var in, out Object
	var outcomes []string
	if c.lookup != nil {
		capability, ok := c.lookup(n.Node)
		if !ok {
			c.add("unknown_node_def", path+".use", step, fmt.Sprintf("unknown capability %q", n.Node))
		} else {
			in, out, outcomes = capability.InputSchema, capability.OutputSchema, capability.Outcomes
			if !capability.Platform {
				if c.sessionful == nil {
					c.sessionful = map[string]bool{}
				}
				c.sessionful[n.ID] = true
			}
		}
	}
	c.checkInputs(path+".input", step, "invalid_source_path", n.Input, in)
	c.checkRequired(path+".input", step, n.Node, n.Input, in)
	c.checkOutputs(path+".output", step, "invalid_destination_path", n.Output, out)
	if n.Retry != nil && *n.Retry < 0 {
		c.add("draft_invalid", path+".retry", step, "retry is a count of further attempts, 0 or more")
	}
	if n.TimeoutSeconds != nil && *n.TimeoutSeconds <= 0 {
		c.add("draft_invalid", path+".timeout_seconds", step, "timeout_seconds must be more than 0")
	}
	return outcomes
}

func (c *checker) checkForeach(path, step string, n Node) {
	if n.Over == nil || n.Over.Err() != nil {
		msg := "foreach needs an over path"
		if n.Over != nil {
			msg = n.Over.Err().Error()
		}
		c.add("invalid_foreach_source", path+".foreach.over", step, msg)
	} else {
		c.readPaths(path+".foreach.over", step, "invalid_foreach_source", []GraphPath{*n.Over})
	}
	if n.As == "" || slices.Contains(contextFields, n.As) {
		c.add("draft_invalid", path+".foreach.as", step, fmt.Sprintf("foreach needs an alias (as) that is not a context field, not %q", n.As))
	}
	if n.Mode != "" && n.Mode != ModeSerial && n.Mode != ModeConcurrent {
		c.add("draft_invalid", path+".foreach.mode", step, fmt.Sprintf("mode is serial or concurrent, not %q", n.Mode))
	}
	if p := n.Concurrent; p != nil {
		active, outstanding := cmp.Or(p.MaxActive, DefaultMaxActive), cmp.Or(p.MaxOutstanding, DefaultMaxOutstanding)
		switch {
		case p.MaxActive < 0 || p.MaxOutstanding < 0:
			c.add("draft_invalid", path+".foreach.concurrent", step, "max_active and max_outstanding are at least 1")
		case outstanding < active:
			c.add("draft_invalid", path+".foreach.concurrent", step, fmt.Sprintf("max_outstanding (%d) must be at least max_active (%d)", outstanding, active))
		case p.Interrupt != "" && p.Interrupt != "quiesce":
			c.add("draft_invalid", path+".foreach.concurrent.interrupt", step, fmt.Sprintf("interrupt is quiesce, not %q", p.Interrupt))
		}
	}
	switch action := n.ItemError.action(); action {
	case ItemFail, ItemSkip:
	case ItemCollect:
		p := n.ItemError.CollectTo
		switch {
		case p == nil:
			c.add("invalid_foreach_collect_destination", path+".foreach.item_error", step, "item_error collect needs collect_to, a state path")
		case p.Err() != nil:
			c.add("invalid_foreach_collect_destination", path+".foreach.item_error.collect_to", step, p.Err().Error())
		case !declares(c.plan.StateSchema, p.Parts[0]):
			c.add("invalid_foreach_collect_destination", path+".foreach.item_error.collect_to", step, fmt.Sprintf("collect_to %s is not a field of the state schema", p))
		}
	default:
		c.add("draft_invalid", path+".foreach.item_error", step, fmt.Sprintf("item_error is fail, skip or collect, not %q", action))
	}
}

// checkInputs validates input bindings: each has one source, reads valid
// paths, and fills distinct, non-overlapping targets that the schema (when
// known) declares.
func (c *checker) checkInputs(path, step, sourceCode string, bindings []InputBinding, schema Object) {
	var targets [][]string
	for i, b := range bindings {
		at := fmt.Sprintf("%s[%d]", path, i)
		targetCode := "invalid_node_input_field"
		if sourceCode == "invalid_interrupt_source" {
			targetCode = sourceCode
		}
		if err := b.Target.Err(); err != nil || b.Target.Root == "" {
			c.add(targetCode, at+".target", step, fmt.Sprintf("invalid target: %v", orMissing(err)))
		} else {
			if len(b.Target.Parts) > 0 && !declares(schema, b.Target.Parts[0]) {
				c.add(targetCode, at+".target", step, fmt.Sprintf("%q is not an input field of this step", b.Target.Parts[0]))
			}
			if overlapsAny(targets, b.Target.Parts) {
				c.add(targetCode, at+".target", step, fmt.Sprintf("target %s overlaps another target of this step", b.Target))
			}
			targets = append(targets, b.Target.Parts)
		}
		if b.kinds() != 1 {
			c.add("draft_invalid", at, step, "a binding has exactly one of path, value and expression")
			continue
		}
		if b.Expression != nil {
			nodes := 0
			if err := b.Expression.check(1, &nodes); err != nil {
				c.add(sourceCode, at+".expression", step, err.Error())
				continue
			}
		}
		c.readPaths(at, step, sourceCode, b.sourcePaths())
	}
}

// checkRequired reports each field the step's input schema requires that
// no input binding fills: the call would be refused at run time. A
// binding of the whole input fills them all. When the workflow's input or
// state declares a field of that name, or near it, the message says which
// path to bind.
func (c *checker) checkRequired(path, step, capability string, bindings []InputBinding, schema Object) {
	required, _ := schema["required"].([]any)
	if len(required) == 0 {
		return
	}
	filled := map[string]bool{}
	for _, b := range bindings {
		if len(b.Target.Parts) == 0 {
			return
		}
		filled[b.Target.Parts[0]] = true
	}
	for _, r := range required {
		field, ok := r.(string)
		if !ok || filled[field] {
			continue
		}
		msg := fmt.Sprintf("step %q does not fill %q, which %s requires: the call would be refused at run time", step, field, capability)
		if p, ok := c.nearestPath(field); ok {
			msg += fmt.Sprintf("; did you mean to bind %s (--in %s=%s)?", p, field, p)
		}
		c.add("required_input_unbound", path, step, msg)
	}
}

// nearestPath is the declared input.X or state.X whose name is field or
// nearest it, if any is near enough.
func (c *checker) nearestPath(field string) (string, bool) {
	var names []string
	pathOf := map[string]string{}
	for _, root := range []struct {
		name   string
		schema Object
	}{{RootInput, c.plan.InputSchema}, {RootState, c.plan.StateSchema}} {
		for _, f := range catalog.Properties(root.schema) {
			if _, seen := pathOf[f]; !seen {
				names, pathOf[f] = append(names, f), root.name+"."+f
			}
		}
	}
	if p, ok := pathOf[field]; ok {
		return p, true
	}
	near, ok := suggest.Nearest(field, names)
	return pathOf[near], ok
}

// checkOutputs validates output bindings: valid local sources that the
// schema (when known) declares, and distinct state targets the state
// schema declares.
func (c *checker) checkOutputs(path, step, targetCode string, bindings []OutputBinding, schema Object) {
	var targets [][]string
	for i, b := range bindings {
		at := fmt.Sprintf("%s[%d]", path, i)
		if err := b.Source.Err(); err != nil || b.Source.Root == "" {
			c.add("invalid_node_output_field", at+".source", step, fmt.Sprintf("invalid source: %v", orMissing(err)))
		} else if len(b.Source.Parts) > 0 && !declares(schema, b.Source.Parts[0]) {
			c.add("invalid_node_output_field", at+".source", step, fmt.Sprintf("%q is not an output field of this step", b.Source.Parts[0]))
		}
		switch err := b.Target.Err(); {
		case err != nil || b.Target.Root == "":
			c.add(targetCode, at+".target", step, fmt.Sprintf("invalid target: %v", orMissing(err)))
		case !declares(c.plan.StateSchema, b.Target.Parts[0]):
			c.add(targetCode, at+".target", step, fmt.Sprintf("%s is not a field of the state schema", b.Target))
		case overlapsAny(targets, b.Target.Parts):
			c.add(targetCode, at+".target", step, fmt.Sprintf("target %s overlaps another target of this step", b.Target))
		default:
			targets = append(targets, b.Target.Parts)
		}
	}
}

// readPaths checks that graph paths are well formed and name declared
// fields: input.X of the input schema, state.X of the state schema,
// context.X of the context.
func (c *checker) readPaths(path, step, code string, paths []GraphPath) {
	for _, p := range paths {
		if err := p.Err(); err != nil {
			c.add(code, path, step, err.Error())
			continue
		}
		if len(p.Parts) == 0 {
			continue
		}
		field := p.Parts[0]
		switch p.Root {
		case RootInput:
			if !declares(c.plan.InputSchema, field) {
				c.add(code, path, step, fmt.Sprintf("%s reads %q, which the input schema does not declare", p, field))
			}
		case RootState:
			if !declares(c.plan.StateSchema, field) {
				c.add(code, path, step, fmt.Sprintf("%s reads %q, which the state schema does not declare", p, field))
			}
		case RootContext:
			if !slices.Contains(contextFields, field) && !slices.Contains(c.aliases, field) {
				c.add(code, path, step, fmt.Sprintf("%s is not a context field (%s, or a foreach alias)", p, strings.Join(contextFields, ", ")))
			}
		}
	}
}

// checkWorkflowOutput validates the workflow's output bindings: path or
// value only, reading declared fields, into distinct declared targets.
func (c *checker) checkWorkflowOutput() {
	var targets [][]string
	for i, b := range c.plan.Output {
		at := fmt.Sprintf("output[%d]", i)
		if err := b.Target.Err(); err != nil || b.Target.Root == "" {
			c.add("invalid_workflow_output_field", at+".target", "", fmt.Sprintf("invalid target: %v", orMissing(err)))
		} else if len(b.Target.Parts) > 0 && (!declares(c.plan.OutputSchema, b.Target.Parts[0]) || overlapsAny(targets, b.Target.Parts)) {
			c.add("invalid_workflow_output_field", at+".target", "", fmt.Sprintf("target %s is not a distinct field of the output schema", b.Target))
		} else {
			targets = append(targets, b.Target.Parts)
		}
		switch {
		case b.Expression != nil || b.kinds() != 1:
			c.add("invalid_workflow_output_field", at, "", "a workflow output binding has a path or a value")
		case b.Path != nil:
			c.readPaths(at+".path", "", "invalid_source_path", []GraphPath{*b.Path})
			if b.Path.Root == RootContext {
				c.add("invalid_source_path", at+".path", "", "workflow output cannot read context: it has no frame once the workflow ends")
			}
		}
	}
}

// reachable marks the nodes the start reaches.
func (c *checker) reachable(ids map[string]bool) map[string]bool {
	next := map[string][]string{}
	for _, e := range c.plan.Edges {
		next[e.From] = append(next[e.From], e.To)
	}
	seen := map[string]bool{}
	var visit func(string)
	visit = func(id string) {
		if seen[id] || !ids[id] {
			return
		}
		seen[id] = true
		for _, to := range next[id] {
			visit(to)
		}
	}
	visit(c.plan.Start)
	return seen
}

// checkForeachBodies reports a foreach body that ends the workflow: from
// the step its "loop" outcome routes to, every route must come back to the
// foreach, never go to the end or through an end step.
func (c *checker) checkForeachBodies() {
	out := map[string][]int{}
	for i, e := range c.plan.Edges {
		out[e.From] = append(out[e.From], i)
	}
	nodes := map[string]Node{}
	index := map[string]int{}
	for i, n := range c.plan.Nodes {
		nodes[n.ID], index[n.ID] = n, i
	}
	reported := map[string]bool{}
	for _, loop := range c.plan.Nodes {
		if loop.Type != NodeForeach {
			continue
		}
		seen := map[string]bool{loop.ID: true}
		var queue []string
		for _, i := range out[loop.ID] {
			if e := c.plan.Edges[i]; e.Outcome == OutcomeLoop && e.To != End {
				queue = append(queue, e.To)
			}
		}
		for len(queue) > 0 {
			id := queue[0]
			queue = queue[1:]
			if seen[id] {
				continue
			}
			seen[id] = true
			n, ok := nodes[id]
			if !ok {
				continue
			}
			if n.Type == NodeEnd && !reported[id] {
				reported[id] = true
				path, step := c.names.node(index[id], n)
				c.add("invalid_foreach_return", path, step, fmt.Sprintf("step %q is an end step inside the body of foreach %q, whose items end by routing back to it", id, loop.ID))
			}
			for _, i := range out[id] {
				e := c.plan.Edges[i]
				if e.To == End && !reported[fmt.Sprint(i)] {
					reported[fmt.Sprint(i)] = true
					path, step := c.names.edge(i, e)
					c.add("invalid_foreach_return", path, step, fmt.Sprintf("route %s.%s goes to %s inside the body of foreach %q, whose items end by routing back to it", e.From, e.Outcome, End, loop.ID))
					continue
				}
				queue = append(queue, e.To)
			}
		}
	}
}

// checkExits finds reachable steps from which the workflow can never
// end: a loop with no exit. Ends are routes to End, end nodes, and (for a
// foreach body) the route back to its foreach, which then goes on.
func (c *checker) checkExits(reachable map[string]bool) {
	prev := map[string][]string{}
	exits := map[string]bool{}
	for _, n := range c.plan.Nodes {
		if n.Type == NodeEnd {
			exits[n.ID] = true
		}
	}
	for _, e := range c.plan.Edges {
		if e.To == End {
			exits[e.From] = true
		}
		prev[e.To] = append(prev[e.To], e.From)
	}
	ends := map[string]bool{}
	var visit func(string)
	visit = func(id string) {
		if ends[id] {
			return
		}
		ends[id] = true
		for _, from := range prev[id] {
			visit(from)
		}
	}
	for _, id := range SortedKeys(exits) {
		visit(id)
	}
	for i, n := range c.plan.Nodes {
		if reachable[n.ID] && !ends[n.ID] {
			path, step := c.names.node(i, n)
			c.add("loop_without_exit", path, step, fmt.Sprintf("from step %q no route ever reaches the end: a loop with no exit", n.ID))
		}
	}
}

// declares reports whether an object schema admits a top-level field:
// it lists the field, or it lists no properties and is not closed.
func declares(schema Object, field string) bool {
	if len(schema) == 0 {
		return true
	}
	props, listed := schema["properties"].(map[string]any)
	if _, ok := props[field]; ok {
		return true
	}
	if extra, ok := schema["additionalProperties"]; ok && extra != false {
		return true
	}
	return !listed && schema["additionalProperties"] != false
}

// overlapsAny reports whether parts equals, contains or is inside one of
// targets.
func overlapsAny(targets [][]string, parts []string) bool {
	for _, t := range targets {
		if slices.Equal(t, parts) || isPrefix(t, parts) || isPrefix(parts, t) || len(t) == 0 || len(parts) == 0 {
			return true
		}
	}
	return false
}

func orMissing(err error) error {
	if err == nil {
		return fmt.Errorf("missing")
	}
	return err
}

// Blocking keeps the diagnostics that are errors, dropping warnings.
func Blocking(diags []Diagnostic) []Diagnostic { return errorsOnly(diags) }

// errorsOnly drops warnings.
func errorsOnly(diags []Diagnostic) []Diagnostic {
	var out []Diagnostic
	for _, d := range diags {
		if d.IsError() {
			out = append(out, d)
		}
	}
	return out
}

// diag is a finding, with its code's repair (DiagnosticCodes) as its
// hint, so that every face that shows it says how to fix it.
func diag(code, path, message string) Diagnostic {
	d := Diagnostic{Code: code, Path: path, Message: message}
	if repair, ok := repairs[code]; ok {
		d.RepairHint = &repair
	}
	return d
}

// Warning is a warning of code about step stepID at path, with its
// code's repair as its hint: for the findings of an edit rather than of
// the document (authoring's input_path_typo).
func Warning(code, path, stepID, message string) Diagnostic {
	d := stepDiag(code, path, stepID, message)
	d.Severity = SeverityWarning
	return d
}

func stepDiag(code, path, stepID, message string) Diagnostic {
	d := diag(code, path, message)
	if stepID != "" {
		d.StepID = &stepID
	}
	return d
}

// Properties is re-exported for callers that project schemas.
var _ = catalog.Properties
