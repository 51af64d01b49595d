package workflow

import "fmt"

// Compile lowers a valid draft to its executable plan: nodes in step-id
// order (start first) and one edge per route.
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
	order := append([]string{d.Start}, without(sortedKeys(d.Steps), d.Start)...)
	for _, id := range order {
		s := d.Steps[id]
		n := Node{ID: id, Type: NodeCall, Node: s.Use, Desc: s.Desc, Input: s.Input, Output: s.Output, Retry: s.Retry, TimeoutSeconds: s.TimeoutSeconds}
		if s.End != nil {
			n = Node{ID: id, Type: NodeEnd, Outcome: s.End.Outcome}
		}
		p.Nodes = append(p.Nodes, n)
		for _, outcome := range sortedKeys(d.Routes[id]) {
			p.Edges = append(p.Edges, Edge{From: id, Outcome: outcome, To: d.Routes[id][outcome]})
		}
	}
	if diags := CheckPlan(p); len(diags) > 0 {
		return Plan{}, fmt.Errorf("compile %q: %s: %s", d.Name, diags[0].Path, diags[0].Message)
	}
	return p, nil
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
	return sortedKeys(seen)
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
