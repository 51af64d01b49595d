package contract

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Helpers to read schema nodes and instance values, both held as decoded JSON.

// keywords returns a schema node's keywords, or nil for a boolean schema.
func keywords(node any) map[string]any {
	s, _ := node.(map[string]any)
	return s
}

// list returns a keyword's value as a list, or nil.
func list(v any) []any {
	l, _ := v.([]any)
	return l
}

// jsonType names the JSON Schema type of a decoded JSON value, telling integers from numbers.
func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if v == math.Trunc(v) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return "unknown"
	}
}

// types returns the "type" keyword as a list, or nil when the schema does not constrain the type.
func types(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if name, ok := x.(string); ok {
				out = append(out, name)
			}
		}
		return out
	}
	return nil
}

// admitsType reports whether a type list accepts a value of JSON type got.
func admitsType(types []string, got string) bool {
	return slices.Contains(types, got) || got == "integer" && slices.Contains(types, "number")
}

// literal writes a JSON value as JSON text.
func literal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(b)
}

// literalList writes each JSON value as JSON text.
func literalList(vs []any) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = literal(v)
	}
	return out
}

// orList joins words as "a", "a or b", "a, b or c".
func orList(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// number writes a schema's numeric keyword without trailing zeros.
func number(v any) string {
	f, ok := v.(float64)
	if !ok {
		return literal(v)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// child extends a value path with an object key: ".name", or `["odd key"]` when the key is not
// a plain identifier.
func child(path, key string) string {
	plain := key != ""
	for i, r := range key {
		if !(r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || i > 0 && '0' <= r && r <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return path + "." + key
	}
	return path + "[" + strconv.Quote(key) + "]"
}

// index extends a value path with an array index.
func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// equal reports whether two decoded JSON values are equal. Both sides come from
// encoding/json (every number a float64), so deep equality is JSON equality.
func equal(a, b any) bool { return reflect.DeepEqual(a, b) }
