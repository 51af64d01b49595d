package workflow

import (
	"fmt"
	"sort"

	"github.com/mcpflow/mcpflow/actors/catalog"
)

// Lookup finds a capability by qualified name.
type Lookup func(name string) (catalog.Capability, bool)

// CheckPlan validates a plan's structure: a known start, unique node ids,
// and edges between known nodes.
func CheckPlan(p Plan) []Diagnostic {
	var diags []Diagnostic
	ids := make(map[string]bool, len(p.Nodes))
	for i, n := range p.Nodes {
		path := fmt.Sprintf("nodes[%d]", i)
		switch {
		case n.ID == "" || n.ID == End:
			diags = append(diags, diag("invalid_node_id", path+".id", fmt.Sprintf("node id %q is not allowed", n.ID)))
		case ids[n.ID]:
			diags = append(diags, diag("duplicate_node_id", path+".id", fmt.Sprintf("node id %q is used twice", n.ID)))
		}
		ids[n.ID] = true
		switch n.Type {
		case NodeCall:
			if n.Node == "" {
				diags = append(diags, diag("unknown_node_def", path+".node", fmt.Sprintf("node %q names no capability", n.ID)))
			}
		case NodeEnd:
		default:
			diags = append(diags, diag("unsupported_step_type", path+".type", fmt.Sprintf("node %q has unsupported type %q", n.ID, n.Type)))
		}
	}
	if !ids[p.Start] {
		diags = append(diags, diag("unknown_start", "start", fmt.Sprintf("start %q is not a node", p.Start)))
	}
	seen := map[[2]string]bool{}
	for i, e := range p.Edges {
		path := fmt.Sprintf("edges[%d]", i)
		if !ids[e.From] {
			diags = append(diags, diag("unknown_edge_source", path+".from", fmt.Sprintf("edge source %q is not a node", e.From)))
		}
		if e.To != End && !ids[e.To] {
			diags = append(diags, diag("unknown_edge_destination", path+".to", fmt.Sprintf("edge destination %q is not a node", e.To)))
		}
		key := [2]string{e.From, e.Outcome}
		if seen[key] {
			diags = append(diags, diag("duplicate_edge", path, fmt.Sprintf("outcome %q of %q is routed twice", e.Outcome, e.From)))
		}
		seen[key] = true
	}
	return diags
}

// ValidateDraft checks a draft against the language and the capabilities
// lookup knows: steps use known capabilities, every declared outcome of a
// step is routed, routes name known steps, paths are well formed.
func ValidateDraft(d Draft, lookup Lookup) []Diagnostic {
	var diags []Diagnostic
	if d.Name == "" {
		diags = append(diags, diag("draft_invalid", "name", "draft needs a name"))
	}
	if _, ok := d.Steps[d.Start]; !ok {
		diags = append(diags, diag("unknown_start", "start", fmt.Sprintf("start %q is not a step", d.Start)))
	}
	outcomes := map[string]bool{}
	for _, o := range d.Outcomes {
		outcomes[o] = true
	}
	for _, id := range sortedKeys(d.Steps) {
		diags = append(diags, validateStep(id, d.Steps[id], d, lookup, outcomes)...)
	}
	for _, from := range sortedKeys(d.Routes) {
		if _, ok := d.Steps[from]; !ok {
			diags = append(diags, stepDiag("unknown_edge_source", "routes."+from, from, fmt.Sprintf("routes name unknown step %q", from)))
			continue
		}
		for _, outcome := range sortedKeys(d.Routes[from]) {
			to := d.Routes[from][outcome]
			if _, ok := d.Steps[to]; !ok && to != End {
				diags = append(diags, stepDiag("unknown_edge_destination", "routes."+from+"."+outcome, from, fmt.Sprintf("route %s.%s goes to unknown step %q", from, outcome, to)))
			}
		}
	}
	for i, b := range d.Output {
		diags = append(diags, checkInputBinding(b, fmt.Sprintf("output[%d]", i), "")...)
	}
	return diags
}

func validateStep(id string, s DraftStep, d Draft, lookup Lookup, workflowOutcomes map[string]bool) []Diagnostic {
	path := "steps." + id
	switch {
	case s.End != nil && s.Use != "":
		return []Diagnostic{stepDiag("draft_invalid", path, id, "a step has exactly one kind")}
	case s.End != nil:
		outcome := s.End.Outcome
		if outcome == "" {
			outcome = OutcomeOK
		}
		if !workflowOutcomes[outcome] {
			return []Diagnostic{stepDiag("undeclared_workflow_outcome", path+".end.outcome", id, fmt.Sprintf("end outcome %q is not a workflow outcome", outcome))}
		}
		return nil
	case s.Use == "":
		return []Diagnostic{stepDiag("unsupported_step_type", path, id, "this version executes use and end steps only")}
	}
	var diags []Diagnostic
	for i, b := range s.Input {
		diags = append(diags, checkInputBinding(b, fmt.Sprintf("%s.input[%d]", path, i), id)...)
	}
	for i, b := range s.Output {
		if _, err := parseLocalPath(b.Source); err != nil {
			diags = append(diags, stepDiag("invalid_node_output_field", fmt.Sprintf("%s.output[%d].source", path, i), id, err.Error()))
		}
		if _, err := parseStatePath(b.Target); err != nil {
			diags = append(diags, stepDiag("invalid_destination_path", fmt.Sprintf("%s.output[%d].target", path, i), id, err.Error()))
		}
	}
	capability, ok := lookup(s.Use)
	if !ok {
		return append(diags, stepDiag("unknown_node_def", path+".use", id, fmt.Sprintf("unknown capability %q", s.Use)))
	}
	declared := map[string]bool{}
	for _, o := range capability.Outcomes {
		declared[o] = true
		if _, ok := d.Routes[id][o]; !ok {
			diags = append(diags, stepDiag("missing_outcome_edge", "routes."+id+"."+o, id, fmt.Sprintf("outcome %q of step %q has no route", o, id)))
		}
	}
	for _, o := range sortedKeys(d.Routes[id]) {
		if !declared[o] {
			diags = append(diags, stepDiag("undeclared_edge_outcome", "routes."+id+"."+o, id, fmt.Sprintf("%q does not declare outcome %q", s.Use, o)))
		}
	}
	return diags
}

func checkInputBinding(b InputBinding, path, stepID string) []Diagnostic {
	var diags []Diagnostic
	if _, err := parseLocalPath(b.Target); err != nil || b.Target == "" {
		diags = append(diags, stepDiag("invalid_node_input_field", path+".target", stepID, fmt.Sprintf("invalid target %q", b.Target)))
	}
	switch {
	case b.Path != "" && b.Value != nil:
		diags = append(diags, stepDiag("draft_invalid", path, stepID, "a binding has either a path or a value"))
	case b.Path != "":
		if _, _, err := parseGraphPath(b.Path); err != nil {
			diags = append(diags, stepDiag("invalid_source_path", path+".path", stepID, err.Error()))
		}
	case b.Value == nil:
		diags = append(diags, stepDiag("draft_invalid", path, stepID, "a binding needs a path or a value"))
	}
	return diags
}

func diag(code, path, message string) Diagnostic {
	return Diagnostic{Code: code, Path: path, Message: message}
}

func stepDiag(code, path, stepID, message string) Diagnostic {
	d := diag(code, path, message)
	if stepID != "" {
		d.StepID = &stepID
	}
	return d
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
