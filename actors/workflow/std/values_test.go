package std

import (
	"testing"

	"github.com/matryer/is"
)

var valueCases = []specCase{
	{spec: "wf.std.coalesce", name: "value wins", input: Object{"value": "a", "fallback": "b"}, wantOutcome: "ok", wantOutput: Object{"value": "a"}},
	{spec: "wf.std.coalesce", name: "null value falls back", input: Object{"value": nil, "fallback": "b"}, wantOutcome: "ok", wantOutput: Object{"value": "b"}},
	{spec: "wf.std.coalesce", name: "absent value falls back", input: Object{"fallback": 2.0}, wantOutcome: "ok", wantOutput: Object{"value": 2.0}},
	{spec: "wf.std.coalesce", name: "falsy but not null is kept", input: Object{"value": false, "fallback": true}, wantOutcome: "ok", wantOutput: Object{"value": false}},
	{spec: "wf.std.coalesce", name: "missing fallback", input: Object{"value": 1.0}, wantErr: `input field "fallback" is required`, schemaRejects: true},

	{spec: "wf.std.default_if_none", name: "value wins", input: Object{"value": 0.0, "fallback": 5.0}, wantOutcome: "ok", wantOutput: Object{"value": 0.0}},
	{spec: "wf.std.default_if_none", name: "null falls back", input: Object{"value": nil, "fallback": []any{"x"}}, wantOutcome: "ok", wantOutput: Object{"value": []any{"x"}}},
	{spec: "wf.std.default_if_none", name: "null fallback allowed", input: Object{"fallback": nil}, wantOutcome: "ok", wantOutput: Object{"value": nil}},

	{spec: "wf.std.constant", name: "object", input: Object{"value": Object{"a": 1.0}}, wantOutcome: "ok", wantOutput: Object{"value": Object{"a": 1.0}}},
	{spec: "wf.std.constant", name: "null", input: Object{"value": nil}, wantOutcome: "ok", wantOutput: Object{"value": nil}},
	{spec: "wf.std.constant", name: "missing value", input: Object{}, wantErr: `input field "value" is required`, schemaRejects: true},
	{spec: "wf.std.constant", name: "nil input", input: nil, wantErr: `input field "value" is required`},

	{spec: "wf.std.truthy", name: "non-empty string", input: Object{"value": "x"}, wantOutcome: "truthy", wantOutput: Object{"value": true}},
	{spec: "wf.std.truthy", name: "non-zero number", input: Object{"value": -1.5}, wantOutcome: "truthy", wantOutput: Object{"value": true}},
	{spec: "wf.std.truthy", name: "non-empty list", input: Object{"value": []any{nil}}, wantOutcome: "truthy", wantOutput: Object{"value": true}},
	{spec: "wf.std.truthy", name: "null", input: Object{"value": nil}, wantOutcome: "falsey", wantOutput: Object{"value": false}},
	{spec: "wf.std.truthy", name: "zero", input: Object{"value": 0.0}, wantOutcome: "falsey", wantOutput: Object{"value": false}},
	{spec: "wf.std.truthy", name: "empty string", input: Object{"value": ""}, wantOutcome: "falsey", wantOutput: Object{"value": false}},
	{spec: "wf.std.truthy", name: "empty object", input: Object{"value": Object{}}, wantOutcome: "falsey", wantOutput: Object{"value": false}},
	{spec: "wf.std.truthy", name: "false", input: Object{"value": false}, wantOutcome: "falsey", wantOutput: Object{"value": false}},
	{spec: "wf.std.truthy", name: "missing value", input: Object{}, wantErr: `input field "value" is required`, schemaRejects: true},

	{spec: "wf.std.runtime_error", name: "message only", input: Object{"message": "boom"}, wantErr: "boom"},
	{spec: "wf.std.runtime_error", name: "object details as JSON", input: Object{"message": "boom", "details": Object{"b": 2.0, "a": "x"}}, wantErr: `boom: {"a":"x","b":2}`},
	{spec: "wf.std.runtime_error", name: "string details verbatim", input: Object{"message": "boom", "details": "disk full"}, wantErr: "boom: disk full"},
	{spec: "wf.std.runtime_error", name: "wrong message type", input: Object{"message": 3.0}, wantErr: `input field "message": expected string, got number`, schemaRejects: true},
	{spec: "wf.std.runtime_error", name: "missing message", input: Object{}, wantErr: `input field "message" is required`, schemaRejects: true},
}

func TestValueSpecs(t *testing.T) {
	runSpecCases(t, valueCases)
}

func TestRuntimeErrorMessage(t *testing.T) {
	cases := []struct {
		name  string
		input Object
		want  string
	}{
		{"message only", Object{"message": "boom"}, "boom"},
		{"null details", Object{"message": "boom", "details": nil}, "boom"},
		{"empty object details", Object{"message": "boom", "details": Object{}}, "boom"},
		{"empty list details", Object{"message": "boom", "details": []any{}}, "boom"},
		{"empty string details", Object{"message": "boom", "details": ""}, "boom"},
		{"false details kept", Object{"message": "boom", "details": false}, "boom: false"},
		{"zero details kept", Object{"message": "boom", "details": 0.0}, "boom: 0"},
		{"list details", Object{"message": "boom", "details": []any{"a", 1.0}}, `boom: ["a",1]`},
		{"empty message", Object{"message": ""}, "runtime error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			spec, _ := Lookup(RuntimeError)
			outcome, output, err := spec.Run(tc.input)
			is.True(err != nil)
			is.Equal(err.Error(), tc.want)
			is.Equal(outcome, "")
			is.Equal(output, nil)
		})
	}
}
