package contract

import (
	"fmt"
	"slices"
)

// The workflow documents people write: a draft (the authoring form), a
// plan (the compiled form an artifact holds) and a deployment. Their
// schemas are built from the manifest's component schemas, which describe
// each part (steps, bindings, conditions, paths, the deployment); only the
// outline of the draft and the plan, which the manifest leaves open, is
// written here, after workflow.Draft and workflow.Plan.

// Document names DocumentSchema takes.
const (
	DocumentDraft      = "draft"
	DocumentPlan       = "plan"
	DocumentDeployment = "deployment"
)

// Documents are the document names, in the order they are listed.
var Documents = []string{DocumentDraft, DocumentPlan, DocumentDeployment}

// schemaDialect is the JSON Schema draft of the documents' schemas.
const schemaDialect = "https://json-schema.org/draft/2020-12/schema"

// DocumentSchema is the JSON Schema of the document named name: one
// self-contained schema whose references point into its own $defs.
func (c *Contract) DocumentSchema(name string) (map[string]any, error) {
	root, err := c.documentRoot(name)
	if err != nil {
		return nil, err
	}
	schema := map[string]any{"$schema": schemaDialect}
	for k, v := range root {
		schema[k] = v
	}
	if names := c.compiler.reachable(root); len(names) > 0 {
		slices.Sort(names)
		defs := make(map[string]any, len(names))
		for _, n := range names {
			defs[n] = c.compiler.defs[n]
		}
		schema["$defs"] = defs
	}
	return schema, nil
}

// ValidateDocument checks a document against its schema.
func (c *Contract) ValidateDocument(name string, doc any) error {
	root, err := c.documentRoot(name)
	if err != nil {
		return err
	}
	return c.compiler.descend(root, doc, name)
}

// documentRoot is the schema of a document, its references into the
// manifest's components.
func (c *Contract) documentRoot(name string) (map[string]any, error) {
	switch name {
	case DocumentDraft:
		return c.draftSchema()
	case DocumentPlan:
		return c.planSchema()
	case DocumentDeployment:
		return ref("WorkflowDeploymentPayload"), nil
	}
	return nil, fmt.Errorf("no document %q: want one of %v", name, Documents)
}

// ref is a reference to a component schema.
func ref(component string) map[string]any { return map[string]any{"$ref": defsRefPrefix + component} }

// arrayOf is an array schema of items.
func arrayOf(items any) map[string]any { return map[string]any{"type": "array", "items": items} }

var (
	stringSchema  = map[string]any{"type": "string"}
	stringsSchema = arrayOf(stringSchema)
	// routeTarget names the step a route goes to, or __end__.
	routeTarget = map[string]any{"type": "string", "minLength": 1}
)

// property is the schema of one property of a component.
func (c *Contract) property(component, prop string) (any, error) {
	def, _ := c.compiler.defs[component].(map[string]any)
	props, _ := def["properties"].(map[string]any)
	s, ok := props[prop]
	if !ok {
		return nil, fmt.Errorf("contract: component %s has no property %s", component, prop)
	}
	return s, nil
}

// orNull is s, or null.
func orNull(s any) map[string]any {
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
}

// describe is s with a description.
func describe(s map[string]any, description string) map[string]any {
	out := map[string]any{"description": description}
	for k, v := range s {
		out[k] = v
	}
	return out
}

// outline is the properties a draft and a plan share. The schemas,
// outcomes and output may be null, as in a compiled draft that has none.
func outline() map[string]any {
	return map[string]any{
		"name":          map[string]any{"type": "string", "minLength": 1, "description": "The workflow's name."},
		"input_schema":  describe(orNull(ref("JsonObject")), "JSON Schema of the workflow's input."),
		"state_schema":  describe(orNull(ref("JsonObject")), "JSON Schema of the workflow's state; a property's reducer says how writes combine."),
		"output_schema": describe(orNull(ref("JsonObject")), "JSON Schema of the workflow's output."),
		"outcomes":      describe(orNull(stringsSchema), "The workflow's outcomes (default [\"ok\"])."),
		"output":        describe(orNull(arrayOf(ref("StepInputBinding"))), "How the workflow's output is built from its input and state."),
		"start":         map[string]any{"type": "string", "minLength": 1, "description": "The first step."},
	}
}

// draftStepKinds are the manifest's draft step components, one per kind.
var draftStepKinds = []string{"DraftUseStep", "DraftForeachStep", "DraftInterruptStep", "DraftJoinStep", "DraftEndStep",
	"DraftWhenStep", "DraftChooseStep", "DraftMatchStep", "DraftSubgraphStep"}

func (c *Contract) draftSchema() (map[string]any, error) {
	steps := make([]any, 0, len(draftStepKinds))
	for _, k := range draftStepKinds {
		if _, ok := c.compiler.defs[k]; !ok {
			return nil, fmt.Errorf("contract: no component %s", k)
		}
		steps = append(steps, ref(k))
	}
	props := outline()
	props["steps"] = map[string]any{"type": "object", "description": "The steps by id; each has exactly one kind key.",
		"additionalProperties": map[string]any{"anyOf": steps}}
	props["routes"] = map[string]any{"type": "object", "description": "Where each outcome of each step goes: {step: {outcome: step or __end__}}.",
		"additionalProperties": map[string]any{"type": "object", "additionalProperties": routeTarget}}
	return map[string]any{
		"title":                "mcpflow workflow draft",
		"description":          "The authoring document of a workflow: named steps and the routes between their outcomes. It compiles to a plan.",
		"type":                 "object",
		"required":             []any{"name", "start", "steps"},
		"properties":           props,
		"additionalProperties": false,
	}, nil
}

// planNodeTypes are the node types of a plan (workflow.Node).
var planNodeTypes = []any{"node", "condition", "foreach", "join", "end", "interrupt", "subgraph"}

func (c *Contract) planSchema() (map[string]any, error) {
	condition, err := c.property("DraftWhenPayload", "if")
	if err != nil {
		return nil, err
	}
	over, err := c.property("DraftForeachPayload", "over")
	if err != nil {
		return nil, err
	}
	mode, err := c.property("DraftForeachPayload", "mode")
	if err != nil {
		return nil, err
	}
	inputs, outputs := arrayOf(ref("StepInputBinding")), arrayOf(ref("OutputBinding"))
	node := map[string]any{
		"type":        "object",
		"description": "One step of a plan; type selects the fields that apply.",
		"required":    []any{"id", "type"},
		"properties": map[string]any{
			"id":              map[string]any{"type": "string", "minLength": 1},
			"type":            map[string]any{"enum": planNodeTypes},
			"node":            map[string]any{"type": "string", "description": "node: the capability it calls."},
			"desc":            map[string]any{"anyOf": []any{stringSchema, map[string]any{"type": "null"}}},
			"input":           inputs,
			"output":          outputs,
			"retry":           map[string]any{"type": "integer", "minimum": 0},
			"timeout_seconds": map[string]any{"type": "integer", "exclusiveMinimum": 0},
			"check":           condition,
			"over":            over,
			"as":              stringSchema,
			"mode":            mode,
			"item_error":      map[string]any{"anyOf": []any{ref("ForeachItemErrorPolicy"), map[string]any{"enum": []any{"fail", "skip", "collect"}}}},
			"concurrent":      ref("ForeachConcurrentPolicy"),
			"outcome":         map[string]any{"type": "string", "description": "end: the workflow's outcome."},
			"kind":            map[string]any{"type": "string", "description": "interrupt: its kind."},
			"request":         inputs,
			"resume":          outputs,
			"outcomes":        stringsSchema,
			"request_schema":  ref("JsonObject"),
			"resume_schema":   ref("JsonObject"),
			"workflow":        ref("WorkflowRef"),
			"input_schema":    ref("JsonObject"),
			"output_schema":   ref("JsonObject"),
		},
		"additionalProperties": false,
	}
	edge := map[string]any{
		"type":                 "object",
		"required":             []any{"from", "outcome", "to"},
		"properties":           map[string]any{"from": routeTarget, "outcome": routeTarget, "to": routeTarget},
		"additionalProperties": false,
	}
	props := outline()
	props["nodes"] = arrayOf(node)
	props["edges"] = arrayOf(edge)
	return map[string]any{
		"title":                "mcpflow workflow plan",
		"description":          "The compiled, executable form of a workflow, as an artifact holds it (workflow.artifacts.create_from_plan takes one).",
		"type":                 "object",
		"required":             []any{"name", "input_schema", "state_schema", "output_schema", "start", "nodes", "edges"},
		"properties":           props,
		"additionalProperties": false,
	}, nil
}
