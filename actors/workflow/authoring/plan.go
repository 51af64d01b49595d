package authoring

import (
	"fmt"
	"strings"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/jsonconv"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// planKeys are the keys a raw plan must have, and whether they may be
// null: the schemas may, as a draft without them compiles to null ones.
// outcomes defaults to ["ok"] and output to none.
var planKeys = []struct {
	name     string
	nullable bool
}{{"name", false}, {"input_schema", true}, {"state_schema", true}, {"output_schema", true}, {"start", false}, {"nodes", false}, {"edges", false}}

// DecodePlan decodes a raw plan an author wrote strictly: a missing key, a
// key of the wrong type or an unknown key anywhere in it makes the params
// malformed, since a plan that does not decode whole would be saved as
// something else than what was sent.
func DecodePlan(raw workflow.Object) (workflow.Plan, error) {
	for _, k := range planKeys {
		if v, ok := raw[k.name]; !ok || (v == nil && !k.nullable) {
			return workflow.Plan{}, malformed("plan.%s is required", k.name)
		}
	}
	var plan workflow.Plan
	if err := jsonconv.Strict(raw, &plan); err != nil {
		return workflow.Plan{}, malformed("plan: %v", err)
	}
	if plan.Outcomes == nil {
		plan.Outcomes = []string{workflow.OutcomeOK}
	}
	return plan, nil
}

// ThroughBindings extends find to the logical names of bindings
// {logical: concrete}: "<logical>.<tool>" resolves as "<concrete>.<tool>"
// (the longest bound logical name wins), so a plan may name its sources
// either way. Live names win over logical ones.
func ThroughBindings(find workflow.Lookup, bindings map[string]string) workflow.Lookup {
	if len(bindings) == 0 {
		return find
	}
	return func(name string) (catalog.Capability, bool) {
		if c, ok := find(name); ok {
			return c, true
		}
		best := ""
		for logical := range bindings {
			if strings.HasPrefix(name, logical+".") && len(logical) > len(best) {
				best = logical
			}
		}
		if best == "" {
			return catalog.Capability{}, false
		}
		return find(bindings[best] + strings.TrimPrefix(name, best))
	}
}

// PlanRefusal refuses the plan name for its blocking findings: the first,
// and how many more there are.
func PlanRefusal(name string, blocking []workflow.Diagnostic) error {
	d := blocking[0]
	msg := fmt.Sprintf("raw plan %q is invalid: %s: %s [%s]", name, d.Path, d.Message, d.Code)
	if more := len(blocking) - 1; more > 0 {
		msg += fmt.Sprintf(" (and %d more)", more)
	}
	return invalid("%s", msg)
}
