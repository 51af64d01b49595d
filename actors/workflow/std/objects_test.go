package std

import (
	"testing"

	"github.com/matryer/is"
)

var person = Object{
	"name": "Ada",
	"age":  36.0,
	"address": Object{
		"city": "London",
		"geo":  Object{"lat": 51.5},
		"none": nil,
	},
	"tags": []any{"math"},
}

var objectCases = []specCase{
	{spec: "wf.std.pick_key", name: "present", input: Object{"mapping": person, "key": "name"}, wantOutcome: "ok", wantOutput: Object{"value": "Ada"}},
	{spec: "wf.std.pick_key", name: "missing is null", input: Object{"mapping": person, "key": "nope"}, wantOutcome: "ok", wantOutput: Object{"value": nil}},
	{spec: "wf.std.pick_key", name: "mapping not an object", input: Object{"mapping": []any{}, "key": "a"}, wantErr: `input field "mapping": expected object, got array`, schemaRejects: true},
	{spec: "wf.std.pick_key", name: "key not a string", input: Object{"mapping": person, "key": 1.0}, wantErr: `input field "key": expected string, got number`, schemaRejects: true},

	{spec: "wf.std.pick_path", name: "nested", input: Object{"mapping": person, "path": "address.geo.lat"}, wantOutcome: "ok", wantOutput: Object{"value": 51.5}},
	{spec: "wf.std.pick_path", name: "single segment", input: Object{"mapping": person, "path": "tags"}, wantOutcome: "ok", wantOutput: Object{"value": []any{"math"}}},
	{spec: "wf.std.pick_path", name: "object result", input: Object{"mapping": person, "path": "address.geo"}, wantOutcome: "ok", wantOutput: Object{"value": Object{"lat": 51.5}}},
	{spec: "wf.std.pick_path", name: "missing segment", input: Object{"mapping": person, "path": "address.zip.code"}, wantOutcome: "ok", wantOutput: Object{"value": nil}},
	{spec: "wf.std.pick_path", name: "through null", input: Object{"mapping": person, "path": "address.none.x"}, wantOutcome: "ok", wantOutput: Object{"value": nil}},
	{spec: "wf.std.pick_path", name: "through a non-object", input: Object{"mapping": person, "path": "name.first"}, wantOutcome: "ok", wantOutput: Object{"value": nil}},
	{spec: "wf.std.pick_path", name: "lists are not indexed", input: Object{"mapping": person, "path": "tags.0"}, wantOutcome: "ok", wantOutput: Object{"value": nil}},
	{spec: "wf.std.pick_path", name: "path not a string", input: Object{"mapping": person, "path": []any{"a"}}, wantErr: `input field "path": expected string, got array`, schemaRejects: true},
	{spec: "wf.std.pick_path", name: "missing mapping", input: Object{"path": "a"}, wantErr: `input field "mapping" is required`, schemaRejects: true},

	{spec: "wf.std.project_fields", name: "keeps listed existing fields", input: Object{"mapping": person, "fields": []any{"name", "age", "nope"}}, wantOutcome: "ok", wantOutput: Object{"mapping": Object{"name": "Ada", "age": 36.0}}},
	{spec: "wf.std.project_fields", name: "null values are kept", input: Object{"mapping": Object{"a": nil}, "fields": []any{"a"}}, wantOutcome: "ok", wantOutput: Object{"mapping": Object{"a": nil}}},
	{spec: "wf.std.project_fields", name: "no fields", input: Object{"mapping": person, "fields": []any{}}, wantOutcome: "ok", wantOutput: Object{"mapping": Object{}}},
	{spec: "wf.std.project_fields", name: "field not a string", input: Object{"mapping": person, "fields": []any{"name", 2.0}}, wantErr: `input field "fields[1]": expected string, got number`, schemaRejects: true},

	{spec: "wf.std.rename_fields", name: "renames and drops the rest", input: Object{"mapping": person, "renames": Object{"name": "full_name", "nope": "x"}}, wantOutcome: "ok", wantOutput: Object{"mapping": Object{"full_name": "Ada"}}},
	{spec: "wf.std.rename_fields", name: "swap", input: Object{"mapping": Object{"a": 1.0, "b": 2.0}, "renames": Object{"a": "b", "b": "a"}}, wantOutcome: "ok", wantOutput: Object{"mapping": Object{"a": 2.0, "b": 1.0}}},
	{spec: "wf.std.rename_fields", name: "duplicate target", input: Object{"mapping": person, "renames": Object{"name": "x", "age": "x"}}, wantErr: `sources "age" and "name" are both renamed to "x"`},
	{spec: "wf.std.rename_fields", name: "target not a string", input: Object{"mapping": person, "renames": Object{"name": true}}, wantErr: `input field "renames.name": expected string, got boolean`, schemaRejects: true},
}

func TestObjectSpecs(t *testing.T) {
	runSpecCases(t, objectCases)
}

func TestObjectSpecsDoNotMutateInput(t *testing.T) {
	is := is.New(t)
	mapping := Object{"a": 1.0, "b": 2.0}
	for _, name := range []string{"wf.std.project_fields", "wf.std.rename_fields"} {
		spec, _ := Lookup(name)
		_, out, err := spec.Run(Object{"mapping": mapping, "fields": []any{"a"}, "renames": Object{"a": "c"}})
		is.NoErr(err)
		out["mapping"].(Object)["z"] = true
	}
	is.Equal(mapping, Object{"a": 1.0, "b": 2.0})
}
