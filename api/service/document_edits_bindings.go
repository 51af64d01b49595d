package service

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/schema"
	"github.com/mcpflow/mcpflow/api/protocol"
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

// mapHint names the methods to use when a map cannot represent the
// stored bindings.
var mapHint = fmt.Sprintf("replace the complete canonical binding list instead (%s, %s or %s)",
	protocol.MethodWorkspaceSetStepInputBindings, protocol.MethodWorkspaceSetStepOutputBindings, protocol.MethodWorkspaceSetWorkflowOutputBindings)

// checkInputBindings checks the shape of input bindings (each with a valid
// target and exactly one well-formed source) as the params schema does.
// Workflow output bindings have a path or a value, never an expression.
func checkInputBindings(bindings []workflow.InputBinding, workflowOutput bool) error {
	if bindings == nil {
		return invalidParams("invalid params: bindings must be a list")
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
			return invalidParams("invalid params: bindings[%d] has exactly one of path, value and expression", i)
		case workflowOutput && b.Expression != nil:
			return invalidParams("invalid params: bindings[%d]: a workflow output binding has a path or a value, not an expression", i)
		case b.Path != nil && (b.Path.Err() != nil || b.Path.Root == ""):
			return invalidParams("invalid params: bindings[%d].path: %v", i, orMissing(b.Path.Err()))
		case b.Expression != nil:
			nodes := 0
			if err := checkExpression(*b.Expression, 1, &nodes); err != nil {
				return invalidParams("invalid params: bindings[%d].expression: %v", i, err)
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
		return invalidParams("invalid params: bindings must be a list")
	}
	for i, b := range bindings {
		if err := checkLocal(fmt.Sprintf("bindings[%d].source", i), b.Source); err != nil {
			return err
		}
		if err := b.Target.Err(); err != nil || b.Target.Root == "" {
			return invalidParams("invalid params: bindings[%d].target: %v", i, orMissing(err))
		}
	}
	return nil
}

func checkLocal(what string, p workflow.LocalPath) error {
	if err := p.Err(); err != nil || p.Root == "" {
		return invalidParams("invalid params: %s: %v", what, orMissing(err))
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

// jsonList is the JSON form of a list of bindings, [] when empty.
func jsonList[T any](items []T) ([]any, error) {
	out := []any{}
	if len(items) == 0 {
		return out, nil
	}
	if err := remarshal(items, &out); err != nil {
		return nil, err
	}
	return out, nil
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

// setStepInputBindings answers workflow.draft_workspaces.set_step_input_bindings:
// targets the capability declares, none overlapping another, literals that
// fit their field, and input.X or state.X sources declared in the workflow
// schema from the capability's schema of their target when they are not
// yet (the checks add_step_from_capability applies too).
func (s *Service) setStepInputBindings(ctx context.Context, p protocol.SetStepInputBindingsParams) (protocol.DraftEditResult, error) {
	if err := checkInputBindings(p.Bindings, false); err != nil {
		return protocol.DraftEditResult{}, err
	}
	return s.stepEdit(ctx, p.WorkspaceID, p.Revision, func(doc workflow.Object) error {
		step, use, err := useStepOf(doc, p.StepID)
		if err != nil {
			return err
		}
		c, err := s.capability(use)
		if err != nil {
			return err
		}
		list, err := capabilityInputs(doc, c, p.Bindings)
		if err != nil {
			return err
		}
		step["input"] = list
		delete(step, "in")
		delete(step, "with")
		return nil
	})
}

// setStepOutputBindings answers workflow.draft_workspaces.set_step_output_bindings:
// sources the capability declares ("." is its whole output), state targets
// none of which overlaps another, declared in the state schema from the
// capability's schema of their source when they are not yet.
func (s *Service) setStepOutputBindings(ctx context.Context, p protocol.SetStepOutputBindingsParams) (protocol.DraftEditResult, error) {
	if err := checkOutputBindings(p.Bindings); err != nil {
		return protocol.DraftEditResult{}, err
	}
	return s.stepEdit(ctx, p.WorkspaceID, p.Revision, func(doc workflow.Object) error {
		step, use, err := useStepOf(doc, p.StepID)
		if err != nil {
			return err
		}
		c, err := s.capability(use)
		if err != nil {
			return err
		}
		targets := make([][]string, len(p.Bindings))
		fragments := make([]workflow.Object, len(p.Bindings))
		for i, b := range p.Bindings {
			fragment, ok := schemaAt(c.OutputSchema, b.Source.Parts)
			if !ok {
				return invalid("bindings[%d].source %s is not declared by capability %q", i, b.Source, use)
			}
			targets[i], fragments[i] = b.Target.Parts, fragment
		}
		if i, j, ok := firstOverlap(targets); ok {
			return invalid("bindings[%d].target %s overlaps bindings[%d].target %s", i, p.Bindings[i].Target, j, p.Bindings[j].Target)
		}
		for i, b := range p.Bindings {
			if err := projectInto(doc, "state_schema", b.Target.Parts, fragments[i], c.OutputSchema); err != nil {
				return err
			}
		}
		return replaceList(step, "output", p.Bindings, "out")
	})
}

// setWorkflowOutputBindings answers
// workflow.draft_workspaces.set_workflow_output_bindings. A path reads a
// field the input or state schema declares (never context: the workflow
// has no frame once it ends) and its target is declared in the output
// schema from the source's schema when it is not yet; a value's target
// must be declared already, and the value must fit it.
func (s *Service) setWorkflowOutputBindings(ctx context.Context, p protocol.SetWorkflowOutputBindingsParams) (protocol.DraftEditResult, error) {
	if err := checkInputBindings(p.Bindings, true); err != nil {
		return protocol.DraftEditResult{}, err
	}
	return s.stepEdit(ctx, p.WorkspaceID, p.Revision, func(doc workflow.Object) error {
		type source struct{ fragment, schema workflow.Object }
		sources := make([]source, len(p.Bindings))
		targets := make([][]string, len(p.Bindings))
		for i, b := range p.Bindings {
			targets[i] = b.Target.Parts
			if b.Path == nil {
				continue
			}
			key := sourceSchemaKey(b.Path.Root)
			if key == "" {
				return invalid("bindings[%d].path %s: workflow output cannot read context, which no frame holds once the workflow ends", i, b.Path)
			}
			from, err := objectAt(doc, key, "draft "+key)
			if err != nil {
				return err
			}
			fragment, ok := schemaAt(from, b.Path.Parts)
			if !ok {
				return invalid("bindings[%d].path %s is not declared by the draft's %s", i, b.Path, key)
			}
			sources[i] = source{fragment, from}
		}
		if i, j, ok := firstOverlap(targets); ok {
			return invalid("bindings[%d].target %s overlaps bindings[%d].target %s", i, p.Bindings[i].Target, j, p.Bindings[j].Target)
		}
		for i, b := range p.Bindings {
			if b.Path != nil {
				if err := projectInto(doc, "output_schema", b.Target.Parts, sources[i].fragment, sources[i].schema); err != nil {
					return err
				}
				continue
			}
			out, err := objectAt(doc, "output_schema", "draft output_schema")
			if err != nil {
				return err
			}
			if _, ok := schemaAt(out, b.Target.Parts); !ok {
				return invalid("bindings[%d].target %s is not declared by the draft's output_schema", i, b.Target)
			}
			if err := checkLiteral(out, b.Target.Parts, b.Value); err != nil {
				return invalid("bindings[%d].value does not fit the output schema at %s: %v", i, b.Target, err)
			}
		}
		list, err := jsonList(p.Bindings)
		if err != nil {
			return err
		}
		doc["output"] = list
		return nil
	})
}

// inputMap parses a map of graph source path -> node-local target (the
// step input and workflow output maps) into path bindings sorted by source.
func inputMap(name string, m map[string]string) ([]workflow.InputBinding, error) {
	if m == nil {
		return nil, invalidParams("invalid params: %s must be an object", name)
	}
	out := make([]workflow.InputBinding, 0, len(m))
	for _, source := range slices.Sorted(maps.Keys(m)) {
		b := workflow.PathBinding(m[source], source)
		if err := b.Path.Err(); err != nil {
			return nil, invalidParams("invalid params: %s key %q: %v", name, source, err)
		}
		if err := b.Target.Err(); err != nil {
			return nil, invalidParams("invalid params: %s[%q]: %v", name, source, err)
		}
		out = append(out, b)
	}
	return out, nil
}

// outputMap parses a map of node-local source -> state path into output
// bindings sorted by source.
func outputMap(name string, m map[string]string) ([]workflow.OutputBinding, error) {
	if m == nil {
		return nil, invalidParams("invalid params: %s must be an object", name)
	}
	out := make([]workflow.OutputBinding, 0, len(m))
	for _, source := range slices.Sorted(maps.Keys(m)) {
		b := workflow.OutputTo(source, m[source])
		if err := b.Source.Err(); err != nil {
			return nil, invalidParams("invalid params: %s key %q: %v", name, source, err)
		}
		if err := b.Target.Err(); err != nil {
			return nil, invalidParams("invalid params: %s[%q]: %v", name, source, err)
		}
		out = append(out, b)
	}
	return out, nil
}

// parsedStep decodes one stored step as the draft parser does, so that
// legacy in/with/out maps read as bindings too.
func parsedStep(id string, step workflow.Object) (workflow.DraftStep, error) {
	parsed, err := parseStep(id, step)
	if err != nil {
		return workflow.DraftStep{}, invalid("step %q cannot be read as bindings (%v); %s", id, err, mapHint)
	}
	return parsed, nil
}

// mergeInputs merges path bindings given as a map into a stored list: a
// stored binding whose source is in the map gets the map's target, in
// place, and the rest of the map is appended; the other stored bindings,
// literals included, stay as they are. A stored expression cannot be
// represented by the reference's maps, and a source the map names that is
// bound more than once cannot be retargeted unambiguously: both refuse the
// merge.
func mergeInputs(stored, given []workflow.InputBinding, what string) ([]workflow.InputBinding, error) {
	targetOf := map[string]workflow.LocalPath{}
	for _, b := range given {
		targetOf[b.Path.String()] = b.Target
	}
	count := map[string]int{}
	for _, b := range stored {
		switch {
		case b.Expression != nil:
			return nil, invalid("%s have an expression binding (target %s), which a map cannot represent; %s", what, b.Target, mapHint)
		case b.Path != nil:
			source := b.Path.String()
			if count[source]++; count[source] > 1 {
				if _, named := targetOf[source]; named {
					return nil, invalid("%s bind source %s more than once, so a map cannot retarget it; %s", what, source, mapHint)
				}
			}
		}
	}
	out := make([]workflow.InputBinding, 0, len(stored)+len(given))
	for _, b := range stored {
		if b.Path != nil {
			if t, ok := targetOf[b.Path.String()]; ok {
				b.Target = t
			}
		}
		out = append(out, b)
	}
	for _, b := range given {
		if count[b.Path.String()] == 0 {
			out = append(out, b)
		}
	}
	return out, nil
}

// mergeOutputs merges output bindings given as a map into a stored list,
// as mergeInputs does: a source the map names that is read more than once
// cannot be retargeted unambiguously.
func mergeOutputs(stored, given []workflow.OutputBinding, what string) ([]workflow.OutputBinding, error) {
	targetOf := map[string]workflow.StatePath{}
	for _, b := range given {
		targetOf[b.Source.String()] = b.Target
	}
	count := map[string]int{}
	out := make([]workflow.OutputBinding, 0, len(stored)+len(given))
	for _, b := range stored {
		source := b.Source.String()
		if count[source]++; count[source] > 1 {
			if _, named := targetOf[source]; named {
				return nil, invalid("%s read source %s more than once, so a map cannot retarget it; %s", what, source, mapHint)
			}
		}
		if t, ok := targetOf[source]; ok {
			b.Target = t
		}
		out = append(out, b)
	}
	for _, b := range given {
		if count[b.Source.String()] == 0 {
			out = append(out, b)
		}
	}
	return out, nil
}

// setStepInputMap answers workflow.draft_workspaces.set_step_input_map.
func (s *Service) setStepInputMap(ctx context.Context, p protocol.SetStepInputMapParams) (protocol.DraftEditResult, error) {
	given, err := inputMap("input_map", p.InputMap)
	if err != nil {
		return protocol.DraftEditResult{}, err
	}
	return s.stepEdit(ctx, p.WorkspaceID, p.Revision, func(doc workflow.Object) error {
		step, _, err := useStepOf(doc, p.StepID)
		if err != nil {
			return err
		}
		list := given
		if p.Merge {
			parsed, err := parsedStep(p.StepID, step)
			if err != nil {
				return err
			}
			if list, err = mergeInputs(parsed.Input, given, fmt.Sprintf("step %q inputs", p.StepID)); err != nil {
				return err
			}
		}
		return replaceList(step, "input", list, "in", "with")
	})
}

// setStepOutputMap answers workflow.draft_workspaces.set_step_output_map.
func (s *Service) setStepOutputMap(ctx context.Context, p protocol.SetStepOutputMapParams) (protocol.DraftEditResult, error) {
	given, err := outputMap("output_map", p.OutputMap)
	if err != nil {
		return protocol.DraftEditResult{}, err
	}
	return s.stepEdit(ctx, p.WorkspaceID, p.Revision, func(doc workflow.Object) error {
		step, _, err := useStepOf(doc, p.StepID)
		if err != nil {
			return err
		}
		list := given
		if p.Merge {
			parsed, err := parsedStep(p.StepID, step)
			if err != nil {
				return err
			}
			if list, err = mergeOutputs(parsed.Output, given, fmt.Sprintf("step %q outputs", p.StepID)); err != nil {
				return err
			}
		}
		return replaceList(step, "output", list, "out")
	})
}

// setWorkflowOutputMap answers workflow.draft_workspaces.set_workflow_output_map.
// Merging keeps literal outputs. A target the map introduces is declared
// in the output schema from the schema of its input or state source, when
// that source is declared.
func (s *Service) setWorkflowOutputMap(ctx context.Context, p protocol.SetWorkflowOutputMapParams) (protocol.DraftEditResult, error) {
	given, err := inputMap("output_map", p.OutputMap)
	if err != nil {
		return protocol.DraftEditResult{}, err
	}
	return s.stepEdit(ctx, p.WorkspaceID, p.Revision, func(doc workflow.Object) error {
		list := given
		if p.Merge {
			var stored []workflow.InputBinding
			if raw := doc["output"]; raw != nil {
				if err := remarshal(raw, &stored); err != nil {
					return invalid("the workflow output bindings cannot be read as a map (%v); %s", err, mapHint)
				}
			}
			var err error
			if list, err = mergeInputs(stored, given, "the workflow output bindings"); err != nil {
				return err
			}
		}
		for _, b := range given {
			key := sourceSchemaKey(b.Path.Root)
			if key == "" {
				continue
			}
			from, err := objectAt(doc, key, "draft "+key)
			if err != nil {
				return err
			}
			if fragment, ok := schemaAt(from, b.Path.Parts); ok {
				if err := projectInto(doc, "output_schema", b.Target.Parts, fragment, from); err != nil {
					return err
				}
			}
		}
		out, err := jsonList(list)
		if err != nil {
			return err
		}
		doc["output"] = out
		return nil
	})
}
