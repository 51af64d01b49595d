package contract

import (
	"errors"
	"maps"
	"slices"
	"strings"
)

// The validator says whether a value matches, and which keywords failed where; it does not
// say which branch of a union the value was meant for, nor word a failure as the contract's
// -32602 messages do. explain walks the schema alongside
// the value, re-checking each part with its own validator, down to the deepest part that
// fails, and describes that part's failure (see reason). It runs only once a check has failed.

// maxRefDepth bounds how far deref and admits follow chains of references.
const maxRefDepth = 8

// descend returns nil when value matches node, the explained failure when it does not,
// or the compile error when node does not compile.
func (c *compiler) descend(node, value any, path string) error {
	err := c.validator(node).validate(value)
	if err == nil || errors.Is(err, errCompile) {
		return err
	}
	return c.explain(node, value, path, err)
}

// explain describes why value fails node; failure is the validator's error for that pair.
// The node's parts are examined first ($ref, allOf, anyOf, oneOf, then array items and
// object properties); when none of them fails, one of the node's own keywords is to blame.
// Parts reached through not, if/then/else, patternProperties or prefixItems (which the
// manifest does not use) are not examined: the validator's own text describes them.
func (c *compiler) explain(node, value any, path string, failure error) error {
	s := keywords(node)
	if s == nil {
		return &ValidationError{Path: path, Reason: "is not allowed"} // the false schema
	}
	if ref, ok := s["$ref"].(string); ok {
		if target, ok := c.component(ref); ok {
			if err := c.descend(target, value, path); err != nil {
				return err
			}
		}
	}
	for _, sub := range list(s["allOf"]) {
		if err := c.descend(sub, value, path); err != nil {
			return err
		}
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		if err := c.explainBranches(kw, list(s[kw]), value, path); err != nil {
			return err
		}
	}
	if err := c.explainParts(s, value, path); err != nil {
		return err
	}
	return &ValidationError{Path: path, Reason: reason(s, value, failure)}
}

// explainBranches explains an anyOf or oneOf that value fails: it follows the branch the value
// was evidently meant for, or lists the branches when that is unclear.
func (c *compiler) explainBranches(kw string, branches []any, value any, path string) error {
	if len(branches) == 0 {
		return nil
	}
	matched := 0
	for _, b := range branches {
		err := c.validator(b).validate(value)
		if errors.Is(err, errCompile) {
			return err
		}
		if err == nil {
			matched++
		}
	}
	switch {
	case matched == 0:
		if b := c.pick(branches, value); b != nil {
			return c.descend(b, value, path)
		}
		reason := "must be " + c.describeAll(branches)
		if !slices.ContainsFunc(branches, func(b any) bool { return c.admits(b, value, 0) }) {
			reason += ", got " + jsonType(value)
		}
		return &ValidationError{Path: path, Reason: reason}
	case kw == "oneOf" && matched > 1:
		return &ValidationError{Path: path, Reason: "matches more than one of " + c.describeAll(branches)}
	}
	return nil
}

// explainParts explains the first failing array item or object property.
func (c *compiler) explainParts(s map[string]any, value any, path string) error {
	switch v := value.(type) {
	case []any:
		if items, ok := s["items"]; ok {
			for i, item := range v {
				if err := c.descend(items, item, index(path, i)); err != nil {
					return err
				}
			}
		}
	case map[string]any:
		properties, _ := s["properties"].(map[string]any)
		for _, key := range slices.Sorted(maps.Keys(v)) {
			sub, declared := properties[key]
			if !declared {
				sub = s["additionalProperties"]
			}
			if keywords(sub) == nil {
				continue // no schema of its own (or a boolean one): the node itself judges the key
			}
			if err := c.descend(sub, v[key], child(path, key)); err != nil {
				return err
			}
		}
	}
	return nil
}

// pick returns the branch a failing value was most likely meant for, or nil. It prefers the only
// branch admitting the value's type; for an object, the only one whose const or enum property
// matches the object's value, else the only one declaring all the object's keys.
func (c *compiler) pick(branches []any, value any) any {
	candidates := filter(branches, func(b any) bool { return c.admits(b, value, 0) })
	if len(candidates) == 1 {
		return candidates[0]
	}
	obj, ok := value.(map[string]any)
	if !ok {
		return nil
	}
	for _, fits := range []func(map[string]any, map[string]any) bool{matchesTag, declaresKeys} {
		narrowed := filter(candidates, func(b any) bool { return fits(c.deref(b), obj) })
		if len(narrowed) == 1 {
			return narrowed[0]
		}
	}
	return nil
}

// admits reports whether a branch accepts the value's JSON type, looking through references
// and nested unions.
func (c *compiler) admits(node, value any, depth int) bool {
	s := c.deref(node)
	if s == nil {
		return node != false
	}
	if t := types(s); t != nil {
		return admitsType(t, jsonType(value))
	}
	branches := slices.Concat(list(s["anyOf"]), list(s["oneOf"]))
	if len(branches) == 0 || depth >= maxRefDepth {
		return true
	}
	return slices.ContainsFunc(branches, func(b any) bool { return c.admits(b, value, depth+1) })
}

// deref follows a chain of references to the keywords of the schema at its end.
func (c *compiler) deref(node any) map[string]any {
	s := keywords(node)
	for range maxRefDepth {
		ref, ok := s["$ref"].(string)
		if !ok {
			break
		}
		target, ok := c.component(ref)
		if !ok {
			break
		}
		s = keywords(target)
	}
	return s
}

// matchesTag reports whether one of obj's keys holds the const (or an enum value) that s
// declares for it, as in {"kind": "path"} against a schema with "kind": {"const": "path"}.
func matchesTag(s map[string]any, obj map[string]any) bool {
	properties, _ := s["properties"].(map[string]any)
	for key, v := range obj {
		p := keywords(properties[key])
		if c, ok := p["const"]; ok && equal(c, v) {
			return true
		}
		if slices.ContainsFunc(list(p["enum"]), func(e any) bool { return equal(e, v) }) {
			return true
		}
	}
	return false
}

// declaresKeys reports whether s declares every key of obj as a property.
func declaresKeys(s map[string]any, obj map[string]any) bool {
	properties, _ := s["properties"].(map[string]any)
	for key := range obj {
		if _, ok := properties[key]; !ok {
			return false
		}
	}
	return true
}

// describeAll describes a union's branches: "TraceRangeParams or null".
func (c *compiler) describeAll(branches []any) string {
	var words []string
	for _, b := range branches {
		if w := c.describe(b); !slices.Contains(words, w) {
			words = append(words, w)
		}
	}
	return orList(words)
}

// describe names what a schema accepts in a word or two: a component name, a literal,
// a type ("array of OutputBinding"), or "any value".
func (c *compiler) describe(node any) string {
	s := keywords(node)
	if s == nil {
		if node == false {
			return "nothing"
		}
		return "any value"
	}
	if ref, ok := s["$ref"].(string); ok {
		return strings.TrimPrefix(ref, defsRefPrefix)
	}
	if v, ok := s["const"]; ok {
		return literal(v)
	}
	if enum := list(s["enum"]); enum != nil {
		return "one of " + strings.Join(literalList(enum), ", ")
	}
	if t := types(s); len(t) > 0 {
		if len(t) == 1 && t[0] == "array" && s["items"] != nil {
			return "array of " + c.describe(s["items"])
		}
		return orList(t)
	}
	if branches := slices.Concat(list(s["anyOf"]), list(s["oneOf"])); len(branches) > 0 {
		return c.describeAll(branches)
	}
	return "any value"
}

// filter returns the elements of xs for which keep is true.
func filter(xs []any, keep func(any) bool) []any {
	var out []any
	for _, x := range xs {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}
