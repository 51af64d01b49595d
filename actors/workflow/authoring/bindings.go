package authoring

import (
	"fmt"
	"maps"
	"slices"

	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/schema"
)

// Binding edits come in two kinds. The *_bindings setters replace a
// complete, ordered canonical binding list: the bindings must be well
// formed (else -32602, before anything is read), must fit the capability
// or workflow contract and may not overlap (else a ValueError after the
// revision check); the schema of a workflow field a binding introduces is
// projected from the contract; an exact replacement is a no-op that keeps
// the revision. The *_map setters are the reference's legacy, lossy maps:
// without merge the map becomes the whole list (sorted by key); with merge
// it updates the list in place, which is refused when the stored bindings
// cannot be read back as such a map.

// MapHint names the operations to use when a map cannot represent the
// stored bindings, by the API methods that run them.
const MapHint = "replace the complete canonical binding list instead (" +
	"workflow.draft_workspaces.set_step_input_bindings, " +
	"workflow.draft_workspaces.set_step_output_bindings or " +
	"workflow.draft_workspaces.set_workflow_output_bindings)"

// checkInputBindings checks the shape of input bindings (each with a valid
// target and exactly one well-formed source) as the params schema does.
// Workflow output bindings have a path or a value, never an expression.
func checkInputBindings(bindings []workflow.InputBinding, workflowOutput bool) error {
	if bindings == nil {
		return malformed("bindings must be a list")
	}
	for i, b := range bindings {
		if err := checkLocal(fmt.Sprintf("bindings[%d].target", i), b.Target); err != nil {
			return err
		}
		n := 0
		for _, set := range []bool{b.Path != nil, b.Value != nil, b.Expression != nil} {
			if set {
				n++
			}
		}
		switch {
		case n != 1:
			return malformed("bindings[%d] has exactly one of path, value and expression", i)
		case workflowOutput && b.Expression != nil:
			return malformed("bindings[%d]: a workflow output binding has a path or a value, not an expression", i)
		case b.Path != nil && (b.Path.Err() != nil || b.Path.Root == ""):
			return malformed("bindings[%d].path: %v", i, orMissing(b.Path.Err()))
		case b.Expression != nil:
			nodes := 0
			if err := checkExpression(*b.Expression, 1, &nodes); err != nil {
				return malformed("bindings[%d].expression: %v", i, err)
			}
		}
	}
	return nil
}

// checkExpression checks an input expression's shape and size.
func checkExpression(x workflow.Expression, depth int, nodes *int) error {
	*nodes++
	switch {
	case depth > workflow.MaxExpressionDepth:
		return fmt.Errorf("an expression is at most %d levels deep", workflow.MaxExpressionDepth)
	case *nodes > workflow.MaxExpressionNodes:
		return fmt.Errorf("an expression has at most %d nodes", workflow.MaxExpressionNodes)
	}
	switch x.Kind {
	case workflow.ExprLiteral:
		if x.Value == nil {
			return fmt.Errorf("a literal expression needs a value")
		}
	case workflow.ExprPath:
		if x.Path == nil || x.Path.Root == "" {
			return fmt.Errorf("a path expression needs a path")
		}
		return x.Path.Err()
	case workflow.ExprArray:
		for _, item := range x.Items {
			if err := checkExpression(item, depth+1, nodes); err != nil {
				return err
			}
		}
	case workflow.ExprObject:
		for _, k := range slices.Sorted(maps.Keys(x.Fields)) {
			if err := checkExpression(x.Fields[k], depth+1, nodes); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("unknown expression kind %q", x.Kind)
	}
	return nil
}

// checkOutputBindings checks the shape of output bindings.
func checkOutputBindings(bindings []workflow.OutputBinding) error {
	if bindings == nil {
		return malformed("bindings must be a list")
	}
	for i, b := range bindings {
		if err := checkLocal(fmt.Sprintf("bindings[%d].source", i), b.Source); err != nil {
			return err
		}
		if err := b.Target.Err(); err != nil || b.Target.Root == "" {
			return malformed("bindings[%d].target: %v", i, orMissing(err))
		}
	}
	return nil
}

func checkLocal(what string, p workflow.LocalPath) error {
	if err := p.Err(); err != nil || p.Root == "" {
		return malformed("%s: %v", what, orMissing(err))
	}
	return nil
}

func orMissing(err error) error {
	if err == nil {
		return fmt.Errorf("missing")
	}
	return err
}

// firstOverlap finds the first two targets that are equal or inside one
// another ("." overlaps everything).
func firstOverlap(targets [][]string) (int, int, bool) {
	for i := range targets {
		for j := i + 1; j < len(targets); j++ {
			n := min(len(targets[i]), len(targets[j]))
			if slices.Equal(targets[i][:n], targets[j][:n]) {
				return i, j, true
			}
		}
	}
	return 0, 0, false
}

// projectInto declares the field at parts of the draft's schema under key
// (input_schema, state_schema or output_schema) as fragment, taken from
// the schema source, unless the schema declares or admits it already. An
// absent schema reads as an object schema with no properties; a result
// that is not valid JSON Schema refuses the edit.
func projectInto(doc workflow.Object, key string, parts []string, fragment, source workflow.Object) error {
	var current workflow.Object
	switch v := doc[key].(type) {
	case map[string]any:
		current = v
	case nil:
		current = workflow.Object{"type": "object", "properties": workflow.Object{}}
	default:
		return invalid("draft %s must be an object", key)
	}
	projected, changed, err := projectSchema(current, parts, fragment, source)
	if err != nil || !changed {
		return err
	}
	if err := schema.Default.Check(projected); err != nil {
		return invalid("declaring %s in %s would make it invalid JSON Schema: %v", workflow.Path{Root: workflow.RootLocal, Parts: parts}, key, err)
	}
	doc[key] = projected
	return nil
}

// sourceSchemaKey is the draft schema a graph path reads: input_schema for
// input.*, state_schema for state.*, none for context.*.
func sourceSchemaKey(root string) string {
	switch root {
	case workflow.RootInput:
		return "input_schema"
	case workflow.RootState:
		return "state_schema"
	}
	return ""
}

// replaceList stores a step's binding list under key, dropping the legacy
// maps it replaces.
func replaceList[T any](step workflow.Object, key string, bindings []T, legacy ...string) error {
	list, err := jsonList(bindings)
	if err != nil {
		return err
	}
	step[key] = list
	for _, k := range legacy {
		delete(step, k)
	}
	return nil
}
