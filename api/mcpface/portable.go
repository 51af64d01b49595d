package mcpface

// Portable tool schemas. A workflow's input schema is its author's JSON
// Schema, and JSON Schema can say one thing in spellings that not every
// client takes: hosts map tool schemas onto narrower dialects (Gemini's
// function declarations take an OpenAPI subset with one type per schema),
// and the MCP inspector's --strict reports each spelling that does not
// port. The face offers each schema in the spelling that does, meaning
// the same: the author's schema is unchanged, and still checks the runs.

// maxSchemaDepth bounds how deep portable rewrites; deeper nodes are kept
// as they are.
const maxSchemaDepth = 64

// jsonTypes are JSON Schema's type names.
var jsonTypes = map[string]bool{"null": true, "boolean": true, "object": true, "array": true, "number": true, "string": true, "integer": true}

// Where a schema sits under a keyword.
var (
	// schemaKeywords hold one schema (items also a list of them).
	schemaKeywords = []string{"items", "contains", "not", "propertyNames", "if", "then", "else",
		"additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems", "contentSchema"}
	// schemaListKeywords hold a list of schemas.
	schemaListKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	// schemaMapKeywords hold schemas by name.
	schemaMapKeywords = []string{"properties", "patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions"}
	// booleanKeywords may be true or false as well as a schema, portably.
	booleanKeywords = map[string]bool{"additionalProperties": true, "unevaluatedProperties": true, "additionalItems": true, "unevaluatedItems": true}
)

// constraining are the keywords that constrain a value: a schema with
// none of them accepts anything.
var constraining = map[string]bool{
	"type": true, "enum": true, "const": true, "multipleOf": true, "maximum": true, "exclusiveMaximum": true,
	"minimum": true, "exclusiveMinimum": true, "maxLength": true, "minLength": true, "pattern": true, "format": true,
	"contentMediaType": true, "contentEncoding": true, "contentSchema": true, "maxItems": true, "minItems": true,
	"uniqueItems": true, "maxContains": true, "minContains": true, "maxProperties": true, "minProperties": true,
	"required": true, "dependentRequired": true, "allOf": true, "anyOf": true, "oneOf": true, "not": true,
	"items": true, "prefixItems": true, "contains": true, "additionalItems": true, "unevaluatedItems": true,
	"properties": true, "patternProperties": true, "additionalProperties": true, "unevaluatedProperties": true,
	"propertyNames": true, "dependentSchemas": true, "dependencies": true, "$ref": true, "$dynamicRef": true, "$recursiveRef": true,
}

// portable is schema spelled so that every client takes it, meaning the
// same; keyword is the keyword it sits under ("" at the root):
//   - a type array (["string", "null"]) is anyOf branches of one type each;
//   - a schema that constrains nothing ({}, or a description alone) and a
//     bare true are anyOf every type, which is what they accept; a bare
//     false is {"not": {}};
//
// and so on down every subschema. The input is not changed.
func portable(schema any, keyword string, depth int) any {
	switch s := schema.(type) {
	case bool:
		switch {
		case booleanKeywords[keyword]:
			return s
		case s:
			return map[string]any{"anyOf": anyType()}
		}
		return map[string]any{"not": map[string]any{}}
	case map[string]any:
		if depth > maxSchemaDepth {
			return s
		}
		return portableNode(s, keyword, depth)
	}
	return schema
}

// portableNode is portable of one schema object.
func portableNode(s map[string]any, keyword string, depth int) map[string]any {
	out := make(map[string]any, len(s)+1)
	for k, v := range s {
		out[k] = v
	}
	for _, k := range schemaKeywords {
		switch v := out[k].(type) {
		case nil:
		case []any: // items as a list (draft 2019 and before)
			out[k] = portableList(v, k, depth)
		default:
			out[k] = portable(v, k, depth+1)
		}
	}
	for _, k := range schemaListKeywords {
		if v, ok := out[k].([]any); ok {
			out[k] = portableList(v, k, depth)
		}
	}
	for _, k := range schemaMapKeywords {
		if v, ok := out[k].(map[string]any); ok {
			m := make(map[string]any, len(v))
			for name, sub := range v {
				m[name] = portable(sub, k, depth+1)
			}
			out[k] = m
		}
	}
	if types, ok := typeUnion(out["type"]); ok {
		delete(out, "type")
		if len(types) == 1 {
			out["type"] = types[0]
		} else {
			branches := make([]any, len(types))
			for i, t := range types {
				branches[i] = map[string]any{"type": t}
			}
			addAnyOf(out, branches)
		}
	}
	if keyword != "not" && !constrains(out) {
		out["anyOf"] = anyType()
	}
	return out
}

func portableList(list []any, keyword string, depth int) []any {
	out := make([]any, len(list))
	for i, sub := range list {
		out[i] = portable(sub, keyword, depth+1)
	}
	return out
}

// typeUnion is a type keyword's list of distinct type names, when it is
// one; anything else (one name, or not a list of type names) is left as
// it is.
func typeUnion(v any) ([]any, bool) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, false
	}
	seen := map[string]bool{}
	for _, t := range list {
		name, ok := t.(string)
		if !ok || !jsonTypes[name] || seen[name] {
			return nil, false
		}
		seen[name] = true
	}
	return list, true
}

// addAnyOf adds an anyOf of branches to a schema: as its anyOf, or beside
// the one it has, in allOf.
func addAnyOf(s map[string]any, branches []any) {
	if _, has := s["anyOf"]; !has {
		s["anyOf"] = branches
		return
	}
	all, _ := s["allOf"].([]any)
	s["allOf"] = append(append([]any(nil), all...), map[string]any{"anyOf": branches})
}

// constrains reports whether a schema has a keyword that constrains a
// value (if counts only with then or else).
func constrains(s map[string]any) bool {
	for k := range s {
		if constraining[k] {
			return true
		}
	}
	_, hasIf := s["if"]
	_, hasThen := s["then"]
	_, hasElse := s["else"]
	return hasIf && (hasThen || hasElse)
}

// anyType is the anyOf of every JSON type: any value (integer is a
// number).
func anyType() []any {
	return []any{
		map[string]any{"type": "string"}, map[string]any{"type": "number"}, map[string]any{"type": "boolean"},
		map[string]any{"type": "object"}, map[string]any{"type": "array"}, map[string]any{"type": "null"},
	}
}
