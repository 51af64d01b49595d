package authoring

import (
	"strings"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/jsonconv"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// Roots a bind path may have beside the graph roots.
const rootOutput = "output"

// bindPath is one side of a bind: a root and at least one key.
type bindPath struct {
	root  string
	parts []string
}

func (b bindPath) String() string { return workflow.Path{Root: b.root, Parts: b.parts}.String() }

// local is the node-local form of b's keys.
func (b bindPath) local() string {
	return workflow.Path{Root: workflow.RootLocal, Parts: b.parts}.String()
}

// parseBindPath reads "local.<keys>", "output.<keys>" or a graph path
// ("input.<keys>", "state.<keys>", "context.<keys>").
func parseBindPath(s string) (bindPath, error) {
	for _, root := range []string{workflow.RootLocal, rootOutput} {
		if s == root {
			return bindPath{}, invalid("path %q must name a field, such as %s.result", s, root)
		}
		if rest, ok := strings.CutPrefix(s, root+"."); ok {
			p := workflow.LocalOf(rest)
			if err := p.Err(); err != nil {
				return bindPath{}, invalid("path %q: %v", s, err)
			}
			return bindPath{root: root, parts: p.Parts}, nil
		}
	}
	p := workflow.GraphOf(s)
	if err := p.Err(); err != nil {
		return bindPath{}, invalid("path %q: %v", s, err)
	}
	if len(p.Parts) == 0 {
		return bindPath{}, invalid("path %q must name a field, such as %s.result", s, p.Root)
	}
	return bindPath{root: p.Root, parts: p.Parts}, nil
}

// BindParams are the params of bind: a use step and the two sides of the
// field it wires.
type BindParams struct {
	StepID, SourcePath, TargetPath string
}

func (BindParams) Check() error { return nil }

// Bind wires one field of a use step, in one of three forms:
// input.X|state.X → local.Y upserts the step's input binding of Y,
// local.Y → state.X upserts its output binding of Y, and local.Y →
// output.Z writes Y to state.Z and state.Z to the workflow output Z. Each
// form projects the capability's schema of Y into the workflow schemas
// that do not declare the field yet. Binding twice changes nothing.
func Bind(doc workflow.Object, p BindParams, find workflow.Lookup) (workflow.Object, error) {
	return edit(doc, p.Check(), func(doc workflow.Object) error {
		step, parsed, err := capabilityStep(doc, p.StepID)
		if err != nil {
			return err
		}
		c, err := capabilityOf(find, parsed.Use)
		if err != nil {
			return err
		}
		source, err := parseBindPath(p.SourcePath)
		if err != nil {
			return err
		}
		target, err := parseBindPath(p.TargetPath)
		if err != nil {
			return err
		}
		switch {
		case target.root == workflow.RootLocal && (source.root == workflow.RootInput || source.root == workflow.RootState):
			return bindInput(doc, step, parsed, c, source, target)
		case source.root == workflow.RootLocal && target.root == workflow.RootState:
			return bindState(doc, step, parsed, c, source, target)
		case source.root == workflow.RootLocal && target.root == rootOutput:
			return bindOutput(doc, step, parsed, c, source, target)
		}
		return invalid("unsupported bind direction: %q -> %q; bind input.X or state.X to local.Y, or local.Y to state.X or output.Z", p.SourcePath, p.TargetPath)
	})
}

// bindInput upserts the input binding of the local target.
func bindInput(doc, step workflow.Object, parsed workflow.DraftStep, c catalog.Capability, source, target bindPath) error {
	b := workflow.PathBinding(target.local(), source.String())
	input := parsed.Input
	replaced := false
	for i := range input {
		if input[i].Target.Err() == nil && input[i].Target.String() == b.Target.String() {
			input[i], replaced = b, true
		}
	}
	if !replaced {
		input = append(input, b)
	}
	return setCapabilityInputs(doc, step, c, input)
}

// bindState upserts the output binding of the local source.
func bindState(doc, step workflow.Object, parsed workflow.DraftStep, c catalog.Capability, source, target bindPath) error {
	b := workflow.OutputTo(source.local(), target.String())
	if _, err := capabilityOutput(doc, c, b); err != nil {
		return err
	}
	_, err := upsertOutput(step, parsed, b)
	return err
}

// bindOutput lowers local.Y → output.Z through state: the step writes Y to
// state.Z and the workflow output Z reads state.Z.
func bindOutput(doc, step workflow.Object, parsed workflow.DraftStep, c catalog.Capability, source, target bindPath) error {
	statePath := workflow.Path{Root: workflow.RootState, Parts: target.parts}.String()
	outTarget := target.local()
	b := workflow.OutputTo(source.local(), statePath)
	fragment, err := capabilityOutput(doc, c, b)
	if err != nil {
		return err
	}
	if err := projectInto(doc, "output_schema", target.parts, fragment, c.OutputSchema); err != nil {
		return err
	}
	previous, err := upsertOutput(step, parsed, b)
	if err != nil {
		return err
	}
	var kept []any
	switch current := doc["output"].(type) {
	case nil:
	case []any:
		for _, item := range current {
			var ob workflow.InputBinding
			if jsonconv.Strict(item, &ob) == nil && ob.Target.Err() == nil {
				path := ""
				if ob.Path != nil && ob.Path.Err() == nil {
					path = ob.Path.String()
				}
				if ob.Target.String() == outTarget || (path != "" && (path == statePath || path == previous)) {
					continue
				}
			}
			kept = append(kept, item)
		}
	default:
		return invalid("draft output must be a list of bindings")
	}
	binding, err := workflow.ObjectOf(workflow.PathBinding(outTarget, statePath))
	if err != nil {
		return err
	}
	doc["output"] = append(kept, binding)
	return nil
}

// upsertOutput replaces the step's output binding from b's source, or adds
// b, and answers the state path the source was written to before ("" when
// it was not).
func upsertOutput(step workflow.Object, parsed workflow.DraftStep, b workflow.OutputBinding) (string, error) {
	output := parsed.Output
	previous, replaced := "", false
	for i := range output {
		if output[i].Source.Err() == nil && output[i].Source.String() == b.Source.String() {
			if output[i].Target.Err() == nil {
				previous = output[i].Target.String()
			}
			output[i], replaced = b, true
		}
	}
	if !replaced {
		output = append(output, b)
	}
	payload, err := jsonList(output)
	if err != nil {
		return "", err
	}
	step["output"] = payload
	delete(step, "out")
	return previous, nil
}

// capabilityInputs checks a use step's input bindings against its
// capability, as set_step_input_bindings does, and answers their JSON
// form: targets are distinct fields the capability declares, literal
// values fit their field's schema, and an input.X or state.X source the
// workflow schema does not declare yet is declared there with the
// capability's schema of the target.
func capabilityInputs(doc workflow.Object, c catalog.Capability, bindings []workflow.InputBinding) ([]any, error) {
	if bindings == nil {
		bindings = []workflow.InputBinding{}
	}
	if err := checkInputBindings(bindings, false); err != nil {
		return nil, err
	}
	targets := make([][]string, len(bindings))
	for i, b := range bindings {
		if _, ok := schemaAt(c.InputSchema, b.Target.Parts); !ok {
			return nil, invalid("input binding %d: target %q is not declared by capability %q", i, b.Target.String(), c.Name)
		}
		targets[i] = b.Target.Parts
	}
	if i, j, ok := firstOverlap(targets); ok {
		return nil, invalid("input binding %d: target %q overlaps the target %q of input binding %d", j, bindings[j].Target.String(), bindings[i].Target.String(), i)
	}
	for i, b := range bindings {
		switch {
		case b.Value != nil:
			if err := checkLiteral(c.InputSchema, b.Target.Parts, b.Value); err != nil {
				return nil, invalid("input binding %d: the value does not satisfy the schema of %q: %v", i, b.Target.String(), err)
			}
		case b.Path != nil:
			if key := sourceSchemaKey(b.Path.Root); key != "" {
				fragment, _ := schemaAt(c.InputSchema, b.Target.Parts)
				if err := projectInto(doc, key, b.Path.Parts, fragment, c.InputSchema); err != nil {
					return nil, err
				}
			}
		}
	}
	return jsonList(bindings)
}

// setCapabilityInputs checks bindings as capabilityInputs does and makes
// them the step's input, dropping the legacy maps they replace.
func setCapabilityInputs(doc, step workflow.Object, c catalog.Capability, bindings []workflow.InputBinding) error {
	list, err := capabilityInputs(doc, c, bindings)
	if err != nil {
		return err
	}
	step["input"] = list
	delete(step, "in")
	delete(step, "with")
	return nil
}

// capabilityOutput checks that a capability declares the local source of
// an output binding, declares its state target with the source's schema
// when the state schema does not yet, and answers the source's schema.
func capabilityOutput(doc workflow.Object, c catalog.Capability, b workflow.OutputBinding) (workflow.Object, error) {
	if err := checkOutputBindings([]workflow.OutputBinding{b}); err != nil {
		return nil, err
	}
	if len(b.Source.Parts) == 0 {
		return nil, invalid("an output source names a field of capability %q, such as result", c.Name)
	}
	fragment, ok := schemaAt(c.OutputSchema, b.Source.Parts)
	if !ok {
		return nil, invalid("output field %q is not declared by capability %q", b.Source.String(), c.Name)
	}
	return fragment, projectInto(doc, "state_schema", b.Target.Parts, fragment, c.OutputSchema)
}
