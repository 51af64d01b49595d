package authoring

import (
	"fmt"

	"github.com/mcpflow/mcpflow/actors/jsonconv"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// SetStepInputBindingsParams are the params of set_step_input_bindings: the use
// step's complete, ordered input binding list.
type SetStepInputBindingsParams struct {
	StepID   string
	Bindings []workflow.InputBinding
}

func (p SetStepInputBindingsParams) Check() error { return checkInputBindings(p.Bindings, false) }

// SetStepInputBindings replaces a use step's input bindings: targets the
// capability declares, none overlapping another, literals that fit their
// field, and input.X or state.X sources declared in the workflow schema
// from the capability's schema of their target when they are not yet (the
// checks AddStepFromCapability applies too).
func SetStepInputBindings(doc workflow.Object, p SetStepInputBindingsParams, find workflow.Lookup) (workflow.Object, error) {
	return edit(doc, p.Check(), func(doc workflow.Object) error {
		step, use, err := useStepOf(doc, p.StepID)
		if err != nil {
			return err
		}
		c, err := capabilityOf(find, use)
		if err != nil {
			return err
		}
		return setCapabilityInputs(doc, step, c, p.Bindings)
	})
}

// SetStepOutputBindingsParams are the params of set_step_output_bindings.
type SetStepOutputBindingsParams struct {
	StepID   string
	Bindings []workflow.OutputBinding
}

func (p SetStepOutputBindingsParams) Check() error { return checkOutputBindings(p.Bindings) }

// SetStepOutputBindings replaces a use step's output bindings: sources
// the capability declares ("." is its whole output), state targets none
// of which overlaps another, declared in the state schema from the
// capability's schema of their source when they are not yet.
func SetStepOutputBindings(doc workflow.Object, p SetStepOutputBindingsParams, find workflow.Lookup) (workflow.Object, error) {
	return edit(doc, p.Check(), func(doc workflow.Object) error {
		step, use, err := useStepOf(doc, p.StepID)
		if err != nil {
			return err
		}
		c, err := capabilityOf(find, use)
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

// SetWorkflowOutputBindingsParams are the params of set_workflow_output_bindings:
// path or value bindings only.
type SetWorkflowOutputBindingsParams struct {
	Bindings []workflow.InputBinding
}

func (p SetWorkflowOutputBindingsParams) Check() error { return checkInputBindings(p.Bindings, true) }

// SetWorkflowOutputBindings replaces the workflow's output bindings. A
// path reads a field the input or state schema declares (never context:
// the workflow has no frame once it ends) and its target is declared in
// the output schema from the source's schema when it is not yet; a
// value's target must be declared already, and the value must fit it.
func SetWorkflowOutputBindings(doc workflow.Object, p SetWorkflowOutputBindingsParams, _ workflow.Lookup) (workflow.Object, error) {
	return edit(doc, p.Check(), func(doc workflow.Object) error {
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

// SetStepInputMapParams are the params of set_step_input_map: graph source path
// -> node-local target. Without Merge the map becomes the whole list.
type SetStepInputMapParams struct {
	StepID   string
	InputMap map[string]string
	Merge    bool
}

func (p SetStepInputMapParams) Check() error {
	_, err := inputMap("input_map", p.InputMap)
	return err
}

// SetStepInputMap sets a step's input bindings from the reference's
// legacy map, replacing them or merging into them.
func SetStepInputMap(doc workflow.Object, p SetStepInputMapParams, _ workflow.Lookup) (workflow.Object, error) {
	given, err := inputMap("input_map", p.InputMap)
	return edit(doc, err, func(doc workflow.Object) error {
		merge := func(stored workflow.DraftStep) ([]workflow.InputBinding, error) {
			return mergeInputs(stored.Input, given, fmt.Sprintf("step %q inputs", p.StepID))
		}
		return setStepMap(doc, p.StepID, given, p.Merge, merge, "input", "in", "with")
	})
}

// SetStepOutputMapParams are the params of set_step_output_map: node-local source
// -> state path.
type SetStepOutputMapParams struct {
	StepID    string
	OutputMap map[string]string
	Merge     bool
}

func (p SetStepOutputMapParams) Check() error {
	_, err := outputMap("output_map", p.OutputMap)
	return err
}

// SetStepOutputMap sets a step's output bindings from the reference's
// legacy map, replacing them or merging into them.
func SetStepOutputMap(doc workflow.Object, p SetStepOutputMapParams, _ workflow.Lookup) (workflow.Object, error) {
	given, err := outputMap("output_map", p.OutputMap)
	return edit(doc, err, func(doc workflow.Object) error {
		merge := func(stored workflow.DraftStep) ([]workflow.OutputBinding, error) {
			return mergeOutputs(stored.Output, given, fmt.Sprintf("step %q outputs", p.StepID))
		}
		return setStepMap(doc, p.StepID, given, p.Merge, merge, "output", "out")
	})
}

// SetWorkflowOutputMapParams are the params of set_workflow_output_map: graph
// source path -> output target.
type SetWorkflowOutputMapParams struct {
	OutputMap map[string]string
	Merge     bool
}

func (p SetWorkflowOutputMapParams) Check() error {
	_, err := inputMap("output_map", p.OutputMap)
	return err
}

// SetWorkflowOutputMap sets the workflow's output bindings from the
// reference's legacy map. Merging keeps literal outputs. A target the map
// introduces is declared in the output schema from the schema of its
// input or state source, when that source is declared.
func SetWorkflowOutputMap(doc workflow.Object, p SetWorkflowOutputMapParams, _ workflow.Lookup) (workflow.Object, error) {
	given, err := inputMap("output_map", p.OutputMap)
	return edit(doc, err, func(doc workflow.Object) error {
		list := given
		if p.Merge {
			var stored []workflow.InputBinding
			if raw := doc["output"]; raw != nil {
				if err := jsonconv.Strict(raw, &stored); err != nil {
					return invalid("the workflow output bindings cannot be read as a map (%v); %s", err, MapHint)
				}
			}
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
