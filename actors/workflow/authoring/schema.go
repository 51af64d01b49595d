package authoring

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/schema"
)

// Schema paths for binding edits. A path is "declared" by an object schema
// the way the draft validator admits a field: the schema lists it under
// properties, or lists no properties and is not closed (then nothing more
// is known about the field). Binding edits use these rules to refuse
// bindings that cannot be right and to project the schema of a workflow
// field a binding introduces, so that the edit leaves a valid draft.

// maxRefHops bounds the chain of local "$ref"s followed at one level.
const maxRefHops = 16

// schemaAt returns the schema of the field at parts inside root, following
// local "$ref"s ("#/$defs/x", "#/definitions/x"). ok is false when some
// level does not declare the next part. A level that admits any field
// answers an empty (any) schema for what lies below it.
func schemaAt(root workflow.Object, parts []string) (workflow.Object, bool) {
	cur := resolveRef(root, root)
	for _, part := range parts {
		props, _ := cur["properties"].(map[string]any)
		if child, listed := props[part]; listed {
			m, _ := child.(map[string]any) // a boolean schema says nothing more
			cur = resolveRef(root, m)
			continue
		}
		if !isOpen(cur) {
			return nil, false
		}
		return workflow.Object{}, true
	}
	if cur == nil {
		cur = workflow.Object{}
	}
	return cur, true
}

// isOpen reports whether an object schema admits fields it does not list:
// it is empty, allows additional properties, or lists none and is not
// closed (the draft validator's rule).
func isOpen(s workflow.Object) bool {
	if len(s) == 0 {
		return true
	}
	extra, has := s["additionalProperties"]
	if has && extra != false {
		return true
	}
	_, listed := s["properties"].(map[string]any)
	return !listed && extra != false
}

// resolveRef follows local "$ref"s of s inside root; a reference it cannot
// follow leaves s as it is.
func resolveRef(root, s workflow.Object) workflow.Object {
	for range maxRefHops {
		ref, ok := s["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#/") {
			return s
		}
		var cur any = root
		for _, tok := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
			m, ok := cur.(map[string]any)
			if !ok {
				return s
			}
			cur = m[tok]
		}
		next, ok := cur.(map[string]any)
		if !ok {
			return s
		}
		s = next
	}
	return s
}

// projectSchema returns target with the field at parts declared as
// fragment when target does not declare it yet: the first level that
// neither lists the next part nor admits any field gets it, with object
// schemas for the parts between. A declared field is left as it is (no
// assignability check); changed reports whether anything was added. When
// the fragment refers to definitions of its source document, those
// definitions are copied into target, beside any it has.
func projectSchema(target workflow.Object, parts []string, fragment, source workflow.Object) (workflow.Object, bool, error) {
	if len(parts) == 0 {
		return target, false, nil
	}
	out, err := workflow.ObjectOf(target)
	if err != nil {
		return nil, false, err
	}
	cur := out
	for i, part := range parts {
		props, listed := cur["properties"].(map[string]any)
		if child, ok := props[part]; ok {
			m, isObject := child.(map[string]any)
			if !isObject || m["$ref"] != nil {
				return target, false, nil // declared in a way not to be edited here
			}
			cur = m
			continue
		}
		if isOpen(cur) {
			return target, false, nil
		}
		if !listed {
			props = workflow.Object{}
			cur["properties"] = props
		}
		leaf, err := workflow.ObjectOf(fragment)
		if err != nil {
			return nil, false, err
		}
		for j := len(parts) - 1; j > i; j-- {
			leaf = workflow.Object{"type": "object", "properties": workflow.Object{parts[j]: leaf}}
		}
		props[part] = leaf
		if hasRef(fragment) {
			copyDefinitions(out, source)
		}
		return out, true, nil
	}
	return target, false, nil
}

// hasRef reports whether a schema fragment contains a "$ref" anywhere.
func hasRef(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["$ref"]; ok {
			return true
		}
		for _, child := range x {
			if hasRef(child) {
				return true
			}
		}
	case []any:
		for _, child := range x {
			if hasRef(child) {
				return true
			}
		}
	}
	return false
}

// copyDefinitions adds source's "$defs" and "definitions" entries that
// target lacks.
func copyDefinitions(target, source workflow.Object) {
	for _, key := range []string{"$defs", "definitions"} {
		defs, ok := source[key].(map[string]any)
		if !ok {
			continue
		}
		into, _ := target[key].(map[string]any)
		if into == nil {
			into = workflow.Object{}
			target[key] = into
		}
		for name, def := range defs {
			if _, exists := into[name]; !exists {
				into[name] = def
			}
		}
	}
}

// checkLiteral checks a literal value against the schema of the field at
// parts inside root (the whole document for no parts, where the value must
// be an object). Only a violation refuses it: a schema the validator
// cannot compile is the draft validator's to report.
func checkLiteral(root workflow.Object, parts []string, raw json.RawMessage) error {
	var value any
	if err := json.Unmarshal(raw, &value); err != nil {
		return err
	}
	var s workflow.Object
	var instance any
	if len(parts) == 0 {
		if _, ok := value.(map[string]any); !ok {
			return errors.New("a value for the whole payload ('.') must be a JSON object")
		}
		s, instance = root, value
	} else {
		fragment, ok := schemaAt(root, parts)
		if !ok || len(fragment) == 0 {
			return nil
		}
		// Validate the fragment in place of a property, keeping the
		// definitions and draft of its document for its "$ref"s.
		s = workflow.Object{"properties": workflow.Object{"v": fragment}, "required": []any{"v"}}
		for _, key := range []string{"$schema", "$defs", "definitions"} {
			if v, ok := root[key]; ok {
				s[key] = v
			}
		}
		instance = workflow.Object{"v": value}
	}
	var violation *schema.Violation
	if err := schema.Default.Validate(s, instance); errors.As(err, &violation) {
		msg := violation.Error()
		if len(parts) > 0 {
			msg = strings.Replace(msg, "at /v", "at value", 1)
		}
		return errors.New(msg)
	}
	return nil
}
