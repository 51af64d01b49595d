package workflow

import (
	"fmt"
	"strconv"
)

// Compile lowers a valid draft to its executable plan: nodes in step-id
// order (start first) and one edge per route. when, choose and match steps
// lower to chains of condition nodes: the first keeps the step's id, the
// next ones are "<step>_2", "<step>_3" and so on, and each routes "true" to
// its target and "false" to the next condition (or the default).
func Compile(d Draft) (Plan, error) {
	if _, ok := d.Steps[d.Start]; !ok {
		return Plan{}, fmt.Errorf("compile %q: start %q is not a step", d.Name, d.Start)
	}
	p := Plan{
		Name:         d.Name,
		InputSchema:  d.InputSchema,
		StateSchema:  d.StateSchema,
		OutputSchema: d.OutputSchema,
		Outcomes:     d.Outcomes,
		Output:       d.Output,
		Start:        d.Start,
	}
	if len(p.Outcomes) == 0 {
		p.Outcomes = []string{OutcomeOK}
	}
	order := append([]string{d.Start}, without(SortedKeys(d.Steps), d.Start)...)
	for _, id := range order {
		nodes, edges := lowerStep(id, d.Steps[id])
		p.Nodes = append(p.Nodes, nodes...)
		p.Edges = append(p.Edges, edges...)
		for _, outcome := range SortedKeys(d.Routes[id]) {
			p.Edges = append(p.Edges, Edge{From: id, Outcome: outcome, To: d.Routes[id][outcome]})
		}
	}
	if diags := errorsOnly(CheckPlan(p)); len(diags) > 0 {
		return Plan{}, fmt.Errorf("compile %q: %s: %s", d.Name, diags[0].Path, diags[0].Message)
	}
	return p, nil
}

// lowerStep returns the plan nodes of one draft step, and the edges that
// its own payload implies (decisions route in their payload, not in the
// draft's routes).
func lowerStep(id string, s DraftStep) ([]Node, []Edge) {
	switch s.Kind() {
	case KindUse:
		return []Node{{ID: id, Type: NodeCall, Node: s.Use, Desc: s.Desc, Input: s.Input, Output: s.Output, Retry: s.Retry, TimeoutSeconds: s.TimeoutSeconds}}, nil
	case KindForeach:
		f := s.Foreach
		mode := f.Mode
		if mode == "" {
			mode = ModeSerial
		}
		over := f.Over
		return []Node{{ID: id, Type: NodeForeach, Over: &over, As: f.As, Mode: mode, ItemError: f.ItemError, Concurrent: f.Concurrent}}, nil
	case KindInterrupt:
		in := s.Interrupt
		outcomes := in.Outcomes
		if len(outcomes) == 0 {
			outcomes = []string{OutcomeSubmitted}
		}
		return []Node{{ID: id, Type: NodeInterrupt, Kind: in.Kind, Request: in.Request, Resume: in.Resume, Outcomes: outcomes, RequestSchema: in.RequestSchema, ResumeSchema: in.ResumeSchema}}, nil
	case KindJoin:
		return []Node{{ID: id, Type: NodeJoin}}, nil
	case KindEnd:
		outcome := s.End.Outcome
		if outcome == "" {
			outcome = OutcomeOK
		}
		return []Node{{ID: id, Type: NodeEnd, Outcome: outcome}}, nil
	case KindSubgraph:
		g := s.Subgraph
		outcomes := g.Outcomes
		if len(outcomes) == 0 {
			outcomes = []string{OutcomeOK}
		}
		ref := g.Workflow
		return []Node{{ID: id, Type: NodeSubgraph, Workflow: &ref, Desc: g.Desc, Input: g.Input, Output: g.Output, InputSchema: g.InputSchema, OutputSchema: g.OutputSchema, Outcomes: outcomes}}, nil
	case KindWhen:
		return conditionChain(id, []ChooseClause{{If: s.When.If, Then: s.When.Then}}, s.When.Otherwise)
	case KindChoose:
		return conditionChain(id, s.Choose.Clauses, s.Choose.Default)
	case KindMatch:
		m := s.Match
		clauses := make([]ChooseClause, len(m.Cases))
		for i, c := range m.Cases {
			value := m.Value
			clauses[i] = ChooseClause{If: Condition{Op: OpEq, Left: &Operand{Path: &value}, Right: &Operand{Value: c.Equals}}, Then: c.Then}
		}
		return conditionChain(id, clauses, m.Default)
	}
	return nil, nil
}

// ClauseID is the node id of clause n (from 0) of a decision step: the
// step's id for the first, then "<step>_2", "<step>_3"...
func ClauseID(step string, n int) string {
	if n == 0 {
		return step
	}
	return step + "_" + strconv.Itoa(n+1)
}

func conditionChain(id string, clauses []ChooseClause, fallback string) ([]Node, []Edge) {
	if fallback == "" {
		fallback = End
	}
	nodes := make([]Node, 0, len(clauses))
	edges := make([]Edge, 0, 2*len(clauses))
	for i, c := range clauses {
		check := c.If
		nid := ClauseID(id, i)
		next := fallback
		if i+1 < len(clauses) {
			next = ClauseID(id, i+1)
		}
		nodes = append(nodes, Node{ID: nid, Type: NodeCondition, Check: &check})
		edges = append(edges, Edge{From: nid, Outcome: OutcomeTrue, To: c.Then}, Edge{From: nid, Outcome: OutcomeFalse, To: next})
	}
	return nodes, edges
}

// Capabilities lists the capability names a plan's call nodes use, sorted
// and without duplicates.
func (p Plan) Capabilities() []string {
	seen := map[string]bool{}
	for _, n := range p.Nodes {
		if n.Type == NodeCall {
			seen[n.Node] = true
		}
	}
	return SortedKeys(seen)
}

// Capabilities lists the capabilities the root plan and every child plan
// call, sorted and without duplicates.
func (p Program) Capabilities() []string {
	seen := map[string]bool{}
	for _, plan := range append([]Plan{p.Root}, mapValues(p.Children)...) {
		for _, name := range plan.Capabilities() {
			seen[name] = true
		}
	}
	return SortedKeys(seen)
}

func mapValues[V any](m map[string]V) []V {
	out := make([]V, 0, len(m))
	for _, k := range SortedKeys(m) {
		out = append(out, m[k])
	}
	return out
}

// Subgraphs lists the child workflows a plan's subgraph nodes reference,
// by key, without duplicates.
func (p Plan) Subgraphs() []WorkflowRef {
	seen := map[string]bool{}
	var refs []WorkflowRef
	for _, n := range p.Nodes {
		if n.Type == NodeSubgraph && n.Workflow != nil && !seen[n.Workflow.Key()] {
			seen[n.Workflow.Key()] = true
			refs = append(refs, *n.Workflow)
		}
	}
	return refs
}

func without(list []string, drop string) []string {
	out := list[:0:0]
	for _, s := range list {
		if s != drop {
			out = append(out, s)
		}
	}
	return out
}
