package std

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Reducers combine the value already at a state path with an incoming
// write. A missing current value and a JSON null current value are the
// same: "nothing there yet".

// Reducer names.
const (
	Replace     = StdSource + ".replace"
	Append      = StdSource + ".append"
	MergeObject = StdSource + ".merge_object"
	Add         = StdSource + ".add"
	SetUnion    = StdSource + ".set_union"
	Max         = StdSource + ".max"
)

// Reducer combines the current value at a state path (present=false when
// absent) with an incoming write.
type Reducer struct {
	Name        string // qualified, e.g. "wf.std.append"
	Description string
	// Mergeable reducers are safe for concurrent sibling writes to one
	// path: each write is folded into the value in turn. Only replace is
	// exclusive.
	Mergeable    bool
	ConfigSchema Object
	Apply        func(current any, present bool, incoming any, config Object) (any, error)
}

// LookupReducer returns the reducer with the qualified name.
func LookupReducer(name string) (Reducer, bool) {
	r, ok := reducers[name]
	if !ok {
		return Reducer{}, false
	}
	r.ConfigSchema = copyObject(r.ConfigSchema)
	return r, true
}

// Reducers lists all reducers sorted by name.
func Reducers() []Reducer {
	out := make([]Reducer, 0, len(reducers))
	for _, r := range reducers {
		r.ConfigSchema = copyObject(r.ConfigSchema)
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// reduceFunc is a reducer body; current is nil when nothing is there yet.
type reduceFunc func(current, incoming any) (any, error)

var reducers = buildReducers(
	newReducer(Replace, "Replace the current value with the incoming one.", false, reduceReplace),
	newReducer(Append, "Append to a list: an incoming list is appended item by item, any other incoming value as one item. With no current value the result is the incoming list, or a one-item list.", true, reduceAppend),
	newReducer(MergeObject, "Shallow-merge an incoming object into the current object; incoming keys win.", true, reduceMergeObject),
	newReducer(Add, "Add the incoming number to the current number (0 when there is none).", true, reduceAdd),
	newReducer(SetUnion, "Union of the current and incoming lists without duplicates (deep JSON equality), in first-seen order.", true, reduceSetUnion),
	newReducer(Max, "Keep the larger of the current and incoming values; both numbers or both strings.", true, reduceMax),
)

func buildReducers(list ...Reducer) map[string]Reducer {
	out := make(map[string]Reducer, len(list))
	for _, r := range list {
		if _, dup := out[r.Name]; dup {
			panic(fmt.Sprintf("std: reducer %s declared twice", r.Name))
		}
		out[r.Name] = r
	}
	return out
}

// newReducer declares a reducer that takes no configuration.
func newReducer(name, description string, mergeable bool, body reduceFunc) Reducer {
	return Reducer{
		Name:         name,
		Description:  description,
		Mergeable:    mergeable,
		ConfigSchema: Object{"type": "object", "properties": Object{}, "additionalProperties": false},
		Apply: func(current any, present bool, incoming any, config Object) (any, error) {
			if err := noConfig(name, config); err != nil {
				return nil, err
			}
			if !present {
				current = nil
			}
			out, err := body(current, incoming)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			return out, nil
		},
	}
}

func noConfig(name string, config Object) error {
	if len(config) == 0 {
		return nil
	}
	keys := make([]string, 0, len(config))
	for k := range config {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return fmt.Errorf("%s takes no config, got %q", name, keys)
}

func valueErr(which, want string, got any) error {
	return fmt.Errorf("%s value: expected %s, got %s", which, want, typeName(got))
}

func reduceReplace(_, incoming any) (any, error) {
	return incoming, nil
}

func reduceAppend(current, incoming any) (any, error) {
	var base []any
	if current != nil {
		items, ok := asArray(current)
		if !ok {
			return nil, valueErr("current", "array", current)
		}
		base = items
	}
	more, isList := asArray(incoming)
	if !isList {
		more = []any{incoming}
	}
	out := make([]any, 0, len(base)+len(more))
	out = append(out, base...)
	return append(out, more...), nil
}

func reduceMergeObject(current, incoming any) (any, error) {
	add, ok := asObject(incoming)
	if !ok {
		return nil, valueErr("incoming", "object", incoming)
	}
	var base Object
	if current != nil {
		if base, ok = asObject(current); !ok {
			return nil, valueErr("current", "object", current)
		}
	}
	out := make(Object, len(base)+len(add))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range add {
		out[k] = v
	}
	return out, nil
}

func reduceAdd(current, incoming any) (any, error) {
	n, ok := asNumber(incoming)
	if !ok {
		return nil, valueErr("incoming", "number", incoming)
	}
	if current == nil {
		return n, nil
	}
	c, ok := asNumber(current)
	if !ok {
		return nil, valueErr("current", "number", current)
	}
	return c + n, nil
}

func reduceSetUnion(current, incoming any) (any, error) {
	more, ok := asArray(incoming)
	if !ok {
		return nil, valueErr("incoming", "array", incoming)
	}
	var base []any
	if current != nil {
		if base, ok = asArray(current); !ok {
			return nil, valueErr("current", "array", current)
		}
	}
	seen := make(map[string]bool, len(base)+len(more))
	out := make([]any, 0, len(base)+len(more))
	for _, item := range append(append([]any(nil), base...), more...) {
		key, err := unionKey(item)
		if err != nil {
			return nil, err
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, item)
		}
	}
	return out, nil
}

// unionKey is the canonical JSON of a value: encoding/json sorts object
// keys and prints equal numbers alike, so equal JSON values share a key.
func unionKey(v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("item is not a JSON value: %w", err)
	}
	return string(data), nil
}

func reduceMax(current, incoming any) (any, error) {
	if current == nil {
		if s, ok := incoming.(string); ok {
			return s, nil
		}
		if n, ok := asNumber(incoming); ok {
			return n, nil
		}
		return nil, valueErr("incoming", "number or string", incoming)
	}
	if c, ok := asNumber(current); ok {
		n, ok := asNumber(incoming)
		if !ok {
			return nil, valueErr("incoming", "number like the current value", incoming)
		}
		return max(c, n), nil
	}
	if c, ok := current.(string); ok {
		s, ok := incoming.(string)
		if !ok {
			return nil, valueErr("incoming", "string like the current value", incoming)
		}
		return max(c, s), nil
	}
	return nil, valueErr("current", "number or string", current)
}
