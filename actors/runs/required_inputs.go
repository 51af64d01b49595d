package runs

import (
	"fmt"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// unboundRequired are the diagnostics of the call steps of plan that use
// capability (its logical name) and leave a field its live input schema
// requires unbound: the call would be refused at run time (issue 29). A
// binding of the whole input fills every field.
func unboundRequired(plan workflow.Plan, capability, concrete string, schema workflow.Object) []Diagnostic {
	required, _ := schema["required"].([]any)
	if len(required) == 0 {
		return nil
	}
	var diags []Diagnostic
	for _, n := range plan.Nodes {
		if n.Type != workflow.NodeCall || n.Node != capability {
			continue
		}
		filled, whole := map[string]bool{}, false
		for _, b := range n.Input {
			if len(b.Target.Parts) == 0 {
				whole = true
			} else {
				filled[b.Target.Parts[0]] = true
			}
		}
		for _, r := range required {
			if field, ok := r.(string); ok && !whole && !filled[field] {
				diags = append(diags, DiagError("required_input_unbound", capability, &concrete,
					fmt.Sprintf("step %q does not fill %q, which %s requires now: its runs would fail at that call", n.ID, field, capability),
					"save a new artifact version that binds it (mcpflow draft bind WORKSPACE STEP input.FIELD FIELD, then draft save)"))
			}
		}
	}
	return diags
}
