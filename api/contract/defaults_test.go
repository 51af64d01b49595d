package contract

import (
	"bytes"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// A manifest whose default contradicts its own schema does not load, whether the default is
// a method's param or sits inside a component.
func TestAManifestWithADefaultItsSchemaRefusesDoesNotLoad(t *testing.T) {
	for _, tc := range []struct{ name, from, to, at string }{
		{"a param's default", `"name": "live_check",
          "required": false,
          "schema": {
            "default": false,`, `"name": "live_check",
          "required": false,
          "schema": {
            "default": "no",`, "/params/live_check"},
		{"a component's default", `"default": 20,
            "minimum": 1,`, `"default": 0,
            "minimum": 1,`, "components/schemas/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(bytes.Count(manifestJSON, []byte(tc.from)), 1) // the test edits one default
			_, err := load(bytes.Replace(manifestJSON, []byte(tc.from), []byte(tc.to), 1))
			is.True(err != nil)
			is.True(strings.Contains(err.Error(), tc.at))
			is.True(strings.Contains(err.Error(), "does not match its schema"))
		})
	}
	_, err := load(manifestJSON) // the embedded manifest's defaults all match
	is.New(t).NoErr(err)
}

// When a value breaks several of a node's own keywords, the reason names the first in the
// order the contract judges them (type, the type's own keywords, extra keys before missing
// ones), and a keyword the contract does not word keeps the validator's rule and message.
func TestTheReasonNamesTheFirstFailingKeywordInTheContractsOrder(t *testing.T) {
	c := newCompiler(nil)
	object := map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}},
		"required": []any{"a"}, "additionalProperties": false}
	str := map[string]any{"type": "string", "minLength": 3.0, "pattern": "^a"}
	for _, tc := range []struct {
		name        string
		node, value any
		want        string
	}{
		{"extra keys before missing ones", object, map[string]any{"b": 1.0}, `x: unknown key "b"`},
		{"missing keys", object, map[string]any{}, `x: missing required key "a"`},
		{"type before the rest", str, 5.0, "x: must be string, got integer"},
		{"minLength before pattern", str, "b", "x: must be at least 3 characters long"},
		{"pattern", str, "bcd", `x: must match the pattern "^a"`},
		{"a keyword not worded here", map[string]any{"minProperties": 2.0}, map[string]any{}, "x: minProperties: object has 0 properties, fewer than 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			err := c.descend(tc.node, tc.value, "x")
			is.True(err != nil)
			is.Equal(err.Error(), tc.want)
		})
	}
}
