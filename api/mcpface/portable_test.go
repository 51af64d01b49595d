package mcpface

import (
	"testing"

	"github.com/matryer/is"
)

// A type array becomes anyOf branches of one type each, at every depth.
func TestATypeArrayBecomesAnyOf(t *testing.T) {
	is := is.New(t)
	in := map[string]any{"type": "object", "properties": map[string]any{
		"note": map[string]any{"type": []any{"string", "null"}, "maxLength": 10.0},
		"tags": map[string]any{"type": "array", "items": map[string]any{"type": []any{"integer"}}},
	}}
	got := portable(in, "", 0).(map[string]any)
	props := got["properties"].(map[string]any)
	is.Equal(props["note"], map[string]any{"anyOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "null"}}, "maxLength": 10.0})
	is.Equal(props["tags"].(map[string]any)["items"], map[string]any{"type": "integer"})                  // one type needs no anyOf
	is.Equal(in["properties"].(map[string]any)["note"].(map[string]any)["type"], []any{"string", "null"}) // the author's schema is unchanged
}

// A type array beside an anyOf of the schema's own is added in allOf,
// so both still hold.
func TestATypeArrayBesideAnAnyOfKeepsBoth(t *testing.T) {
	is := is.New(t)
	own := []any{map[string]any{"minLength": 1.0}, map[string]any{"const": 0.0}}
	got := portable(map[string]any{"type": []any{"string", "number"}, "anyOf": own}, "", 0).(map[string]any)
	is.Equal(got["anyOf"], own)
	is.Equal(got["allOf"], []any{map[string]any{"anyOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}}})
}

// A schema that constrains nothing says what it accepts: any type.
func TestAnUnconstrainedSchemaAcceptsAnyTypeExplicitly(t *testing.T) {
	is := is.New(t)
	got := portable(map[string]any{"type": "object", "properties": map[string]any{
		"anything": map[string]any{"description": "Whatever the tool takes."},
		"yes":      true,
		"no":       false,
	}, "additionalProperties": false}, "", 0).(map[string]any)
	props := got["properties"].(map[string]any)
	is.Equal(props["anything"], map[string]any{"description": "Whatever the tool takes.", "anyOf": anyType()})
	is.Equal(props["yes"], map[string]any{"anyOf": anyType()})
	is.Equal(props["no"], map[string]any{"not": map[string]any{}}) // {} under not is what it means
	is.Equal(got["additionalProperties"], false)                   // a boolean where one is portable stays
}

// A deployment tool's input schema is the artifact's, spelled portably.
func TestADeploymentToolsInputSchemaIsPortable(t *testing.T) {
	is := is.New(t)
	s := inputSchema(map[string]any{"properties": map[string]any{"when": map[string]any{"type": []any{"string", "null"}}}})
	is.Equal(s["type"], "object")
	is.Equal(s["properties"].(map[string]any)["when"].(map[string]any)["anyOf"], []any{map[string]any{"type": "string"}, map[string]any{"type": "null"}})
}

// The face's own tools' schemas are written portably: making them so
// changes nothing.
func TestTheFacesOwnSchemasArePortable(t *testing.T) {
	is := is.New(t)
	f := &Face{}
	var schemas []any
	for _, c := range f.companions(nil) {
		schemas = append(schemas, c.tool.InputSchema, c.tool.OutputSchema)
	}
	for _, e := range f.finderTools(nil, nil) {
		schemas = append(schemas, e.tool.InputSchema, e.tool.OutputSchema)
	}
	is.True(len(schemas) >= 2*(3+len(authoring)+2))
	for _, s := range schemas {
		if s == nil {
			continue // no outputSchema
		}
		is.Equal(portable(s, "", 0), s)
	}
}
