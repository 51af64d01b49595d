package contract

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpflow/mcpflow/actors/workflow/schema"
)

// reason says in a few words why value fails the keywords of s itself (not of its parts).
// failure is the validator's *schema.Violation for the pair: its rules are the keywords that
// failed. When several did, the one named is the first in ownKeywords, the order in which the
// contract has always judged them; the wording takes its numbers from the schema. A keyword
// not worded here keeps the validator's rule and message.
func reason(s map[string]any, value any, failure error) string {
	var v *schema.Violation
	if !errors.As(failure, &v) {
		return failure.Error()
	}
	switch firstRule(v) {
	case "type":
		if t := types(s); len(t) > 0 {
			return fmt.Sprintf("must be %s, got %s", orList(t), jsonType(value))
		}
	case "enum":
		return "must be " + orList(literalList(list(s["enum"])))
	case "const":
		return "must be " + literal(s["const"])
	case "minimum":
		return "must be >= " + number(s["minimum"])
	case "maximum":
		return "must be <= " + number(s["maximum"])
	case "exclusiveMinimum":
		return "must be > " + number(s["exclusiveMinimum"])
	case "exclusiveMaximum":
		return "must be < " + number(s["exclusiveMaximum"])
	case "multipleOf":
		return "must be a multiple of " + number(s["multipleOf"])
	case "minLength":
		if number(s["minLength"]) == "1" {
			return "must not be empty"
		}
		return "must be at least " + number(s["minLength"]) + " characters long"
	case "maxLength":
		return "must be at most " + number(s["maxLength"]) + " characters long"
	case "pattern":
		return fmt.Sprintf("must match the pattern %q", s["pattern"])
	case "minItems":
		return "must have at least " + number(s["minItems"]) + " items"
	case "maxItems":
		return "must have at most " + number(s["maxItems"]) + " items"
	case "uniqueItems":
		return "must not repeat items"
	case "required":
		if missing := missingKeys(s, value); len(missing) > 0 {
			return keysPhrase("missing required", missing)
		}
	case "additionalProperties":
		if unknown := unknownKeys(s, value); len(unknown) > 0 {
			return keysPhrase("unknown", unknown)
		}
	}
	return v.Rule + ": " + v.Message
}

// ownKeywords are the keywords reason words, in the order they are judged: the type, then
// what applies to a value of it (numbers, strings, arrays, objects), extra keys before
// missing ones.
var ownKeywords = []string{"type", "enum", "const", "multipleOf", "minimum", "maximum", "exclusiveMinimum",
	"exclusiveMaximum", "minLength", "maxLength", "pattern", "minItems", "maxItems", "uniqueItems",
	"additionalProperties", "required"}

// firstRule returns the first of ownKeywords among the violation's rules, or "" if none is.
func firstRule(v *schema.Violation) string {
	rules := make([]string, 0, 1+len(v.Others))
	rules = append(rules, v.Rule)
	for _, o := range v.Others {
		rules = append(rules, o.Rule)
	}
	for _, kw := range ownKeywords {
		if slices.Contains(rules, kw) {
			return kw
		}
	}
	return ""
}

// missingKeys lists the required keys an object lacks.
func missingKeys(s map[string]any, value any) []string {
	obj, _ := value.(map[string]any)
	var missing []string
	for _, r := range list(s["required"]) {
		if key, ok := r.(string); ok {
			if _, present := obj[key]; !present {
				missing = append(missing, key)
			}
		}
	}
	return missing
}

// unknownKeys lists, sorted, the keys of an object that s does not declare.
func unknownKeys(s map[string]any, value any) []string {
	obj, _ := value.(map[string]any)
	properties, _ := s["properties"].(map[string]any)
	var unknown []string
	for _, key := range slices.Sorted(maps.Keys(obj)) {
		if _, ok := properties[key]; !ok {
			unknown = append(unknown, key)
		}
	}
	return unknown
}

// keysPhrase writes `unknown key "a"` or `unknown keys "a", "b"`.
func keysPhrase(what string, keys []string) string {
	quoted := make([]string, len(keys))
	for i, k := range keys {
		quoted[i] = fmt.Sprintf("%q", k)
	}
	noun := "key"
	if len(keys) > 1 {
		noun = "keys"
	}
	return fmt.Sprintf("%s %s %s", what, noun, strings.Join(quoted, ", "))
}
