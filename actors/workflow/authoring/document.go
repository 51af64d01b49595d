package authoring

import (
	"encoding/json"
	"strings"

	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/schema"
)

// SetNameParams are the params of set_name.
type SetNameParams struct{ Name string }

func (SetNameParams) Check() error { return nil }

// SetName names the workflow.
func SetName(doc workflow.Object, p SetNameParams, _ workflow.Lookup) (workflow.Object, error) {
	return edit(doc, p.Check(), func(doc workflow.Object) error {
		doc["name"] = p.Name
		return nil
	})
}

// SetStartParams are the params of set_start.
type SetStartParams struct{ StepID string }

func (SetStartParams) Check() error { return nil }

// SetStart makes a step the start of the workflow, whether or not it
// exists yet: the draft's diagnostics say when it does not.
func SetStart(doc workflow.Object, p SetStartParams, _ workflow.Lookup) (workflow.Object, error) {
	return edit(doc, p.Check(), func(doc workflow.Object) error {
		doc["start"] = p.StepID
		return nil
	})
}

// ReplaceDocumentParams are the params of replace_document: the whole
// next draft, valid or not.
type ReplaceDocumentParams struct{ Draft workflow.Object }

func (ReplaceDocumentParams) Check() error { return nil }

// ReplaceDocument answers the draft given, whatever the document held.
func ReplaceDocument(_ workflow.Object, p ReplaceDocumentParams, _ workflow.Lookup) (workflow.Object, error) {
	return edit(p.Draft, nil, func(workflow.Object) error { return nil })
}

// ContractParams are a workflow's contract: its three schemas and its
// outcomes. A nil field is not given.
type ContractParams struct {
	InputSchema, StateSchema, OutputSchema workflow.Object
	Outcomes                               []string
}

// schemaNames are the contract's schemas, in the order they are checked.
var schemaNames = []string{"input_schema", "state_schema", "output_schema"}

func (p ContractParams) schemas() map[string]workflow.Object {
	return map[string]workflow.Object{"input_schema": p.InputSchema, "state_schema": p.StateSchema, "output_schema": p.OutputSchema}
}

// Check refuses a schema given that is not valid JSON Schema, outcomes
// given that are not a list of distinct names, and a contract with
// nothing given.
func (p ContractParams) Check() error {
	fields, given := p.schemas(), 0
	for _, name := range schemaNames {
		if fields[name] == nil {
			continue
		}
		given++
		if err := checkSchemaParam(name, fields[name]); err != nil {
			return err
		}
	}
	if p.Outcomes != nil {
		given++
		if err := checkWorkflowOutcomes(p.Outcomes); err != nil {
			return err
		}
	}
	if given == 0 {
		return invalid("set_contract requires at least one of input_schema, state_schema, output_schema and outcomes")
	}
	return nil
}

// SetContract replaces each schema or outcome list given whole (merging
// JSON Schemas would make removing a required field or a reducer
// ambiguous).
func SetContract(doc workflow.Object, p ContractParams, _ workflow.Lookup) (workflow.Object, error) {
	return edit(doc, p.Check(), func(doc workflow.Object) error {
		for name, value := range p.schemas() {
			if value != nil {
				doc[name] = value
			}
		}
		if p.Outcomes != nil {
			doc["outcomes"] = jsonStrings(p.Outcomes) // as a stored draft reads back
		}
		return nil
	})
}

// EmptyParams are the params of create_empty: the workflow's name and
// contract; absent schemas are object schemas with no properties, absent
// outcomes ["ok"].
type EmptyParams struct {
	Name string
	ContractParams
}

// Empty is a draft with its contract and no steps yet (so it is invalid
// until a start step exists).
func Empty(p EmptyParams) (workflow.Object, error) {
	if p.Name == "" {
		return nil, malformed("name must not be empty")
	}
	schemas := p.schemas()
	doc := workflow.Object{"name": p.Name, "output": []any{}, "start": "", "steps": workflow.Object{}, "routes": workflow.Object{}}
	for _, name := range schemaNames {
		value := schemas[name]
		if value == nil {
			value = workflow.Object{"type": "object", "properties": workflow.Object{}}
		} else if err := checkSchemaParam(name, value); err != nil {
			return nil, err
		}
		doc[name] = value
	}
	outcomes := p.Outcomes
	if outcomes == nil {
		outcomes = []string{workflow.OutcomeOK}
	}
	if err := checkWorkflowOutcomes(outcomes); err != nil {
		return nil, err
	}
	doc["outcomes"] = outcomes
	return workflow.ObjectOf(doc)
}

// checkSchemaParam refuses a contract schema that is not valid JSON Schema
// (the reference's ValueError).
func checkSchemaParam(name string, s workflow.Object) error {
	if err := schema.Default.Check(s); err != nil {
		return invalid("%s is not valid JSON Schema: %v", name, err)
	}
	return nil
}

// checkWorkflowOutcomes refuses an empty outcome list, a blank outcome and
// outcomes that are equal once trimmed.
func checkWorkflowOutcomes(outcomes []string) error {
	if len(outcomes) == 0 {
		return invalid("workflow outcomes must contain at least one value")
	}
	seen := map[string]bool{}
	for _, o := range outcomes {
		t := strings.TrimSpace(o)
		if t == "" {
			return invalid("workflow outcomes must not contain blank values")
		}
		if seen[t] {
			return invalid("workflow outcomes must be unique, and %q is there twice", t)
		}
		seen[t] = true
	}
	return nil
}

// RemoveStepParams are the params of remove_step.
type RemoveStepParams struct{ StepID string }

func (RemoveStepParams) Check() error { return nil }

// RemoveStep removes a step and its own routes; routes into it stay,
// dangling, for the author to repoint (the diagnostics say where).
// Removing a step that does not exist changes nothing.
func RemoveStep(doc workflow.Object, p RemoveStepParams, _ workflow.Lookup) (workflow.Object, error) {
	return edit(doc, p.Check(), func(doc workflow.Object) error {
		steps, err := objectAt(doc, "steps", "draft steps")
		if err != nil {
			return err
		}
		if _, ok := steps[p.StepID]; !ok {
			return nil
		}
		delete(steps, p.StepID)
		if routes, ok := doc["routes"].(map[string]any); ok {
			delete(routes, p.StepID)
		}
		return nil
	})
}

// RemoveBindingParams are the params of remove_binding: the node-local
// targets of input bindings and the node-local sources of output bindings
// to remove.
type RemoveBindingParams struct {
	StepID          string
	Inputs, Outputs []string
}

func (p RemoveBindingParams) Check() error {
	if len(p.Inputs) == 0 && len(p.Outputs) == 0 {
		return invalid("pass at least one input or output binding to remove")
	}
	return nil
}

// RemoveBinding drops the step's input bindings whose target, and output
// bindings whose source, is one of those named; naming only bindings that
// are not there changes nothing.
func RemoveBinding(doc workflow.Object, p RemoveBindingParams, _ workflow.Lookup) (workflow.Object, error) {
	return edit(doc, p.Check(), func(doc workflow.Object) error {
		step, err := stepOf(doc, p.StepID)
		if err != nil {
			return err
		}
		for _, side := range []struct {
			key, field string
			names      []string
		}{{"input", "target", p.Inputs}, {"output", "source", p.Outputs}} {
			kept, removed, err := withoutBindings(step, p.StepID, side.key, side.field, side.names)
			if err != nil {
				return err
			}
			if removed {
				step[side.key] = kept
			}
		}
		return nil
	})
}

// withoutBindings filters the binding list step[key], dropping the bindings
// whose node-local path at field is one of names (compared in canonical
// form, so "a.b" matches {"root": "local", "parts": ["a", "b"]}).
func withoutBindings(step workflow.Object, id, key, field string, names []string) ([]any, bool, error) {
	raw, ok := step[key]
	if !ok || raw == nil || len(names) == 0 {
		return nil, false, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, false, invalid("%s bindings of step %q must be a list", key, id)
	}
	drop := map[string]bool{}
	for _, n := range names {
		drop[localText(n)] = true
	}
	kept := make([]any, 0, len(list))
	for _, item := range list {
		b, ok := item.(map[string]any)
		if !ok {
			return nil, false, invalid("%s binding entries of step %q must be objects", key, id)
		}
		if !drop[storedLocalText(b[field])] {
			kept = append(kept, item)
		}
	}
	return kept, len(kept) != len(list), nil
}

// localText is the canonical form of a node-local path, or s itself when
// it does not parse.
func localText(s string) string {
	if p := workflow.LocalOf(s); p.Err() == nil {
		return p.String()
	}
	return s
}

// storedLocalText is the canonical form of a stored node-local path
// (string or structural), "" when it is neither.
func storedLocalText(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	var p workflow.LocalPath
	if err := json.Unmarshal(data, &p); err != nil || p.Err() != nil {
		if s, ok := v.(string); ok {
			return s
		}
		return ""
	}
	return p.String()
}

// objectAt returns doc[key] as an object, creating none: a missing or null
// key reads as an empty object that is not attached; any other non-object
// value is a ValueError naming what.
func objectAt(doc workflow.Object, key, what string) (workflow.Object, error) {
	switch v := doc[key].(type) {
	case nil:
		return workflow.Object{}, nil
	case map[string]any:
		return v, nil
	default:
		return nil, invalid("%s must be an object", what)
	}
}

// stepOf finds step id in a draft document: a missing step is a KeyError,
// a step that is not an object a ValueError.
func stepOf(doc workflow.Object, id string) (workflow.Object, error) {
	steps, err := objectAt(doc, "steps", "draft steps")
	if err != nil {
		return nil, err
	}
	raw, ok := steps[id]
	if !ok {
		return nil, notFound("unknown draft step %q", id)
	}
	step, ok := raw.(map[string]any)
	if !ok {
		return nil, invalid("draft step %q must be an object", id)
	}
	return step, nil
}

// useStepOf finds step id and the capability it uses: a step of another
// kind is a ValueError.
func useStepOf(doc workflow.Object, id string) (workflow.Object, string, error) {
	step, err := stepOf(doc, id)
	if err != nil {
		return nil, "", err
	}
	use, _ := step[workflow.KindUse].(string)
	if use == "" {
		return nil, "", invalid("draft step %q does not declare a capability use", id)
	}
	return step, use, nil
}

// jsonStrings is a list of strings in the form decoded JSON gives it, so
// that a document edited in memory reads as one read from the store.
func jsonStrings(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
