package std

import (
	"encoding/json"
	"testing"

	"github.com/matryer/is"
)

func TestJSONEqual(t *testing.T) {
	cases := []struct {
		name string
		a, b any
		want bool
	}{
		{"nulls", nil, nil, true},
		{"null and false", nil, false, false},
		{"numbers across Go types", 1.0, int64(1), true},
		{"json.Number", json.Number("2.5"), 2.5, true},
		{"bool vs number", true, 1.0, false},
		{"strings", "a", "a", true},
		{"string vs number", "1", 1.0, false},
		{"arrays in order", []any{1.0, "a"}, []any{1.0, "a"}, true},
		{"arrays out of order", []any{1.0, "a"}, []any{"a", 1.0}, false},
		{"typed slice", []string{"a"}, []any{"a"}, true},
		{"objects", Object{"a": []any{1.0}}, map[string]any{"a": []any{1.0}}, true},
		{"object with extra key", Object{"a": 1.0}, Object{"a": 1.0, "b": nil}, false},
		{"object null vs missing", Object{"a": nil}, Object{"b": nil}, false},
		{"typed map", map[string]string{"a": "x"}, Object{"a": "x"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(jsonEqual(tc.a, tc.b), tc.want)
			is.Equal(jsonEqual(tc.b, tc.a), tc.want) // symmetric
		})
	}
}

func TestTypeName(t *testing.T) {
	is := is.New(t)
	is.Equal(typeName(nil), "null")
	is.Equal(typeName(true), "boolean")
	is.Equal(typeName(1.0), "number")
	is.Equal(typeName(3), "number")
	is.Equal(typeName("x"), "string")
	is.Equal(typeName([]any{}), "array")
	is.Equal(typeName(Object{}), "object")
	is.Equal(typeName(struct{}{}), "non-JSON value struct {}")
}

func TestDeepCopyIsIndependent(t *testing.T) {
	is := is.New(t)
	orig := Object{"a": []any{Object{"b": 1.0}}, "r": []any{"x"}}
	cp := copyObject(orig)
	cp["a"].([]any)[0].(map[string]any)["b"] = 2.0
	cp["r"].([]any)[0] = "y"
	is.Equal(orig, Object{"a": []any{Object{"b": 1.0}}, "r": []any{"x"}})
}
