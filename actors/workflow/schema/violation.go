package schema

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// Violation reports that an instance does not match its schema.
//
// When the instance breaks several rules, the violations are sorted by
// Path (then Rule and Message); the receiver is the first and Others holds
// the rest.
type Violation struct {
	// Path is a JSON pointer (RFC 6901) into the instance, "" for the root.
	// For "required", "dependencies", "dependentRequired",
	// "additionalProperties" and "propertyNames" it points at the property
	// concerned (missing, or not allowed), so each such property is its own
	// violation.
	Path string
	// Rule is the failing keyword, e.g. "required", "type",
	// "additionalProperties", "anyOf". A false schema reports "false".
	Rule string
	// Message describes the failure in terms of the instance.
	Message string
	// Others holds the further violations, if any, in the same order.
	Others []*Violation
}

// Error formats the first violation as `at /a/b: type: expected string,
// got number` (the root is shown as `(root)`), followed by
// ` (and N more)` when there are others.
func (e *Violation) Error() string {
	s := e.one()
	if n := len(e.Others); n > 0 {
		s += fmt.Sprintf(" (and %d more)", n)
	}
	return s
}

func (e *Violation) one() string {
	loc := e.Path
	if loc == "" {
		loc = "(root)"
	}
	return "at " + loc + ": " + e.Rule + ": " + e.Message
}

// violationFrom flattens the library's error tree into sorted leaves.
func violationFrom(ve *jsonschema.ValidationError) *Violation {
	var out []*Violation
	collect(ve, &out)
	if len(out) == 0 {
		out = append(out, &Violation{Path: pointer(ve.InstanceLocation), Rule: "schema", Message: "validation failed"})
	}
	slices.SortStableFunc(out, func(a, b *Violation) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		if c := strings.Compare(a.Rule, b.Rule); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
	out = slices.CompactFunc(out, func(a, b *Violation) bool {
		return a.Path == b.Path && a.Rule == b.Rule && a.Message == b.Message
	})
	first := out[0]
	if len(out) > 1 {
		first.Others = out[1:]
	}
	return first
}

// maxAlternatives bounds how many failing branches an anyOf/oneOf message
// describes.
const maxAlternatives = 4

func collect(e *jsonschema.ValidationError, out *[]*Violation) {
	path := pointer(e.InstanceLocation)
	add := func(path, rule, msg string) {
		*out = append(*out, &Violation{Path: path, Rule: rule, Message: msg})
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.AllOf:
		for _, c := range e.Causes {
			collect(c, out)
		}
	case *kind.Reference:
		if len(e.Causes) == 0 {
			add(path, k.Keyword, "value does not match the referenced schema")
		}
		for _, c := range e.Causes {
			collect(c, out)
		}
	case *kind.AnyOf:
		add(path, "anyOf", alternatives(path, e.Causes))
	case *kind.OneOf:
		if len(k.Subschemas) >= 2 {
			add(path, "oneOf", fmt.Sprintf("value matches alternatives #%d and #%d, but must match exactly one", k.Subschemas[0], k.Subschemas[1]))
		} else {
			add(path, "oneOf", alternatives(path, e.Causes))
		}
	case *kind.Required:
		for _, name := range k.Missing {
			add(child(path, name), "required", fmt.Sprintf("missing property %s", quote(name)))
		}
	case *kind.Dependency:
		for _, name := range k.Missing {
			add(child(path, name), "dependencies", fmt.Sprintf("missing property %s (required when %s is present)", quote(name), quote(k.Prop)))
		}
	case *kind.DependentRequired:
		for _, name := range k.Missing {
			add(child(path, name), "dependentRequired", fmt.Sprintf("missing property %s (required when %s is present)", quote(name), quote(k.Prop)))
		}
	case *kind.AdditionalProperties:
		for _, name := range k.Properties {
			add(child(path, name), "additionalProperties", fmt.Sprintf("property %s is not allowed", quote(name)))
		}
	case *kind.PropertyNames:
		msg := fmt.Sprintf("property name %s is not allowed", quote(k.Property))
		if len(e.Causes) > 0 {
			// The causes validate the name itself, at the root of a
			// separate instance.
			v := violationFrom(&jsonschema.ValidationError{ErrorKind: &kind.Group{}, Causes: e.Causes})
			msg += ": " + v.Rule + ": " + v.Message
		}
		add(child(path, k.Property), "propertyNames", msg)
	default:
		rule, msg := describe(e.ErrorKind)
		add(path, rule, msg)
	}
}

// alternatives summarises why each branch of an anyOf/oneOf failed.
func alternatives(path string, causes []*jsonschema.ValidationError) string {
	var b strings.Builder
	fmt.Fprintf(&b, "value matches none of the %d alternatives", len(causes))
	for i, c := range causes {
		if i == maxAlternatives {
			b.WriteString("; …")
			break
		}
		v := violationFrom(c)
		fmt.Fprintf(&b, "; #%d: ", i)
		if v.Path != path {
			b.WriteString("at ")
			b.WriteString(v.Path)
			b.WriteString(": ")
		}
		b.WriteString(v.Rule)
		b.WriteString(": ")
		b.WriteString(v.Message)
	}
	return b.String()
}

// describe returns the rule and message for a single-keyword failure.
func describe(k jsonschema.ErrorKind) (rule, msg string) {
	switch k := k.(type) {
	case *kind.Type:
		return "type", fmt.Sprintf("expected %s, got %s", strings.Join(k.Want, " or "), k.Got)
	case *kind.Enum:
		return "enum", fmt.Sprintf("value %s is not one of %s", show(k.Got), showList(k.Want))
	case *kind.Const:
		return "const", fmt.Sprintf("value %s is not %s", show(k.Got), show(k.Want))
	case *kind.Format:
		msg := fmt.Sprintf("%s is not a valid %s", show(k.Got), k.Want)
		if k.Err != nil {
			msg += ": " + k.Err.Error()
		}
		return "format", msg
	case *kind.MinProperties:
		return "minProperties", fmt.Sprintf("object has %d properties, fewer than %d", k.Got, k.Want)
	case *kind.MaxProperties:
		return "maxProperties", fmt.Sprintf("object has %d properties, more than %d", k.Got, k.Want)
	case *kind.MinItems:
		return "minItems", fmt.Sprintf("array has %d items, fewer than %d", k.Got, k.Want)
	case *kind.MaxItems:
		return "maxItems", fmt.Sprintf("array has %d items, more than %d", k.Got, k.Want)
	case *kind.AdditionalItems:
		return "additionalItems", fmt.Sprintf("array has %d more items than allowed", k.Count)
	case *kind.UniqueItems:
		return "uniqueItems", fmt.Sprintf("items %d and %d are equal", k.Duplicates[0], k.Duplicates[1])
	case *kind.Contains:
		return "contains", "no item matches the contains schema"
	case *kind.MinContains:
		return "minContains", fmt.Sprintf("%d items match the contains schema, fewer than %d", len(k.Got), k.Want)
	case *kind.MaxContains:
		return "maxContains", fmt.Sprintf("%d items match the contains schema, more than %d", len(k.Got), k.Want)
	case *kind.MinLength:
		return "minLength", fmt.Sprintf("string has %d characters, fewer than %d", k.Got, k.Want)
	case *kind.MaxLength:
		return "maxLength", fmt.Sprintf("string has %d characters, more than %d", k.Got, k.Want)
	case *kind.Pattern:
		return "pattern", fmt.Sprintf("%s does not match pattern %s", show(k.Got), strconv.Quote(k.Want))
	case *kind.ContentEncoding:
		return "contentEncoding", fmt.Sprintf("value is not %s encoded: %v", k.Want, k.Err)
	case *kind.ContentMediaType:
		return "contentMediaType", fmt.Sprintf("value is not of media type %s: %v", k.Want, k.Err)
	case *kind.ContentSchema:
		return "contentSchema", "decoded content does not match contentSchema"
	case *kind.Minimum:
		return "minimum", fmt.Sprintf("%s is less than %s", num(k.Got), num(k.Want))
	case *kind.Maximum:
		return "maximum", fmt.Sprintf("%s is greater than %s", num(k.Got), num(k.Want))
	case *kind.ExclusiveMinimum:
		return "exclusiveMinimum", fmt.Sprintf("%s is not greater than %s", num(k.Got), num(k.Want))
	case *kind.ExclusiveMaximum:
		return "exclusiveMaximum", fmt.Sprintf("%s is not less than %s", num(k.Got), num(k.Want))
	case *kind.MultipleOf:
		return "multipleOf", fmt.Sprintf("%s is not a multiple of %s", num(k.Got), num(k.Want))
	case *kind.Not:
		return "not", "value must not match the schema"
	case *kind.FalseSchema:
		return "false", "no value is allowed here"
	case *kind.RefCycle:
		return "$ref", "reference cycle"
	case *kind.InvalidJsonValue:
		return "type", fmt.Sprintf("%T is not a JSON value", k.Value)
	}
	if kp := k.KeywordPath(); len(kp) > 0 {
		return kp[0], "validation failed"
	}
	return "schema", "validation failed"
}

// pointer encodes instance location tokens as a JSON pointer.
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escape(t))
	}
	return b.String()
}

func child(path, token string) string { return path + "/" + escape(token) }

func escape(t string) string {
	if !strings.ContainsAny(t, "~/") {
		return t
	}
	return strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
}

// maxShown bounds how much of a value a message quotes.
const maxShown = 64

func quote(s string) string {
	if utf8.RuneCountInString(s) > maxShown {
		s = string([]rune(s)[:maxShown]) + "…"
	}
	return strconv.Quote(s)
}

// show renders an instance value compactly for a message.
func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return quote(x)
	case *big.Rat:
		return num(x)
	}
	b, err := json.Marshal(v)
	if err != nil || len(b) > maxShown {
		switch v.(type) {
		case map[string]any:
			return "(object)"
		case []any:
			return "(array)"
		}
		return fmt.Sprintf("(%T)", v)
	}
	return string(b)
}

const maxListed = 10

func showList(vs []any) string {
	parts := make([]string, 0, min(len(vs), maxListed)+1)
	for i, v := range vs {
		if i == maxListed {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, show(v))
	}
	return strings.Join(parts, ", ")
}

func num(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.RatString()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}
