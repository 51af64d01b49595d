package std

import "testing"

var rows = []any{
	Object{"id": 1.0, "kind": "a", "name": "one"},
	Object{"id": 2.0, "kind": "b"},
	Object{"id": 3.0, "kind": "a", "name": nil},
	Object{"id": 4.0, "tags": []any{"x", Object{"k": 1.0}}},
}

var collectionCases = []specCase{
	{spec: "wf.std.first_item", name: "first", input: Object{"items": []any{"a", "b"}}, wantOutcome: "ok", wantOutput: Object{"item": "a"}},
	{spec: "wf.std.first_item", name: "null item", input: Object{"items": []any{nil}}, wantOutcome: "ok", wantOutput: Object{"item": nil}},
	{spec: "wf.std.first_item", name: "empty fails", input: Object{"items": []any{}}, wantErr: "expected at least one item", schemaRejects: true},
	{spec: "wf.std.first_item", name: "not a list", input: Object{"items": "abc"}, wantErr: `input field "items": expected array, got string`, schemaRejects: true},

	{spec: "wf.std.first_item_or_none", name: "first", input: Object{"items": []any{1.0, 2.0}}, wantOutcome: "ok", wantOutput: Object{"item": 1.0}},
	{spec: "wf.std.first_item_or_none", name: "empty is null", input: Object{"items": []any{}}, wantOutcome: "ok", wantOutput: Object{"item": nil}},
	{spec: "wf.std.first_item_or_none", name: "null items", input: Object{"items": nil}, wantErr: `input field "items": expected array, got null`, schemaRejects: true},

	{spec: "wf.std.first_item_maybe", name: "found", input: Object{"items": []any{Object{"a": 1.0}}}, wantOutcome: "found", wantOutput: Object{"item": Object{"a": 1.0}}},
	{spec: "wf.std.first_item_maybe", name: "missing", input: Object{"items": []any{}}, wantOutcome: "missing", wantOutput: Object{"item": nil}},
	{spec: "wf.std.first_item_maybe", name: "found null item", input: Object{"items": []any{nil, 1.0}}, wantOutcome: "found", wantOutput: Object{"item": nil}},
	{spec: "wf.std.first_item_maybe", name: "missing items", input: Object{}, wantErr: `input field "items" is required`, schemaRejects: true},

	{spec: "wf.std.last_item", name: "last", input: Object{"items": []any{"a", "b"}}, wantOutcome: "ok", wantOutput: Object{"item": "b"}},
	{spec: "wf.std.last_item", name: "single", input: Object{"items": []any{"a"}}, wantOutcome: "ok", wantOutput: Object{"item": "a"}},
	{spec: "wf.std.last_item", name: "empty fails", input: Object{"items": []any{}}, wantErr: "expected at least one item", schemaRejects: true},

	{spec: "wf.std.last_item_or_none", name: "last", input: Object{"items": []any{1.0, 2.0}}, wantOutcome: "ok", wantOutput: Object{"item": 2.0}},
	{spec: "wf.std.last_item_or_none", name: "empty is null", input: Object{"items": []any{}}, wantOutcome: "ok", wantOutput: Object{"item": nil}},
	{spec: "wf.std.last_item_or_none", name: "object is not a list", input: Object{"items": Object{}}, wantErr: `input field "items": expected array, got object`, schemaRejects: true},

	{spec: "wf.std.length", name: "three", input: Object{"items": []any{1.0, nil, "x"}}, wantOutcome: "ok", wantOutput: Object{"count": 3.0}},
	{spec: "wf.std.length", name: "empty", input: Object{"items": []any{}}, wantOutcome: "ok", wantOutput: Object{"count": 0.0}},
	{spec: "wf.std.length", name: "typed Go slice", input: Object{"items": []string{"a", "b"}}, wantOutcome: "ok", wantOutput: Object{"count": 2.0}},
	{spec: "wf.std.length", name: "number is not a list", input: Object{"items": 3.0}, wantErr: `input field "items": expected array, got number`, schemaRejects: true},

	{spec: "wf.std.is_empty", name: "empty", input: Object{"items": []any{}}, wantOutcome: "ok", wantOutput: Object{"value": true}},
	{spec: "wf.std.is_empty", name: "not empty", input: Object{"items": []any{nil}}, wantOutcome: "ok", wantOutput: Object{"value": false}},
	{spec: "wf.std.is_empty", name: "missing items", input: Object{}, wantErr: `input field "items" is required`, schemaRejects: true},

	{spec: "wf.std.filter_items", name: "by string", input: Object{"items": rows, "key": "kind", "value": "a"}, wantOutcome: "ok", wantOutput: Object{"items": []any{rows[0], rows[2]}}},
	{spec: "wf.std.filter_items", name: "by number", input: Object{"items": rows, "key": "id", "value": 2.0}, wantOutcome: "ok", wantOutput: Object{"items": []any{rows[1]}}},
	{spec: "wf.std.filter_items", name: "by deep value", input: Object{"items": rows, "key": "tags", "value": []any{"x", Object{"k": 1.0}}}, wantOutcome: "ok", wantOutput: Object{"items": []any{rows[3]}}},
	{spec: "wf.std.filter_items", name: "null matches null and missing", input: Object{"items": rows, "key": "name", "value": nil}, wantOutcome: "ok", wantOutput: Object{"items": []any{rows[1], rows[2], rows[3]}}},
	{spec: "wf.std.filter_items", name: "boolean never equals number", input: Object{"items": []any{Object{"f": 1.0}}, "key": "f", "value": true}, wantOutcome: "ok", wantOutput: Object{"items": []any{}}},
	{spec: "wf.std.filter_items", name: "item not an object", input: Object{"items": []any{Object{}, "x"}, "key": "k", "value": 1.0}, wantErr: `input field "items[1]": expected object, got string`, schemaRejects: true},
	{spec: "wf.std.filter_items", name: "missing value", input: Object{"items": rows, "key": "k"}, wantErr: `input field "value" is required`, schemaRejects: true},

	{spec: "wf.std.filter_items_present", name: "present even when null", input: Object{"items": rows, "key": "name"}, wantOutcome: "ok", wantOutput: Object{"items": []any{rows[0], rows[2]}}},
	{spec: "wf.std.filter_items_present", name: "none present", input: Object{"items": rows, "key": "zzz"}, wantOutcome: "ok", wantOutput: Object{"items": []any{}}},
	{spec: "wf.std.filter_items_present", name: "key not a string", input: Object{"items": rows, "key": nil}, wantErr: `input field "key": expected string, got null`, schemaRejects: true},

	{spec: "wf.std.extract_field", name: "skips missing", input: Object{"items": rows, "field": "name"}, wantOutcome: "ok", wantOutput: Object{"values": []any{"one", nil}}},
	{spec: "wf.std.extract_field", name: "empty list", input: Object{"items": []any{}, "field": "name"}, wantOutcome: "ok", wantOutput: Object{"values": []any{}}},
	{spec: "wf.std.extract_field", name: "item not an object", input: Object{"items": []any{[]any{}}, "field": "name"}, wantErr: `input field "items[0]": expected object, got array`, schemaRejects: true},

	{spec: "wf.std.concat", name: "with separator", input: Object{"items": []any{"a", "b", "c"}, "separator": ", "}, wantOutcome: "ok", wantOutput: Object{"text": "a, b, c"}},
	{spec: "wf.std.concat", name: "default separator", input: Object{"items": []any{"hello", " wow", "cool"}}, wantOutcome: "ok", wantOutput: Object{"text": "hello wowcool"}},
	{spec: "wf.std.concat", name: "empty list", input: Object{"items": []any{}, "separator": "-"}, wantOutcome: "ok", wantOutput: Object{"text": ""}},
	{spec: "wf.std.concat", name: "non-string item", input: Object{"items": []any{"a", 1.0}}, wantErr: `input field "items[1]": expected string, got number`, schemaRejects: true},
	{spec: "wf.std.concat", name: "separator not a string", input: Object{"items": []any{"a"}, "separator": 1.0}, wantErr: `input field "separator": expected string, got number`, schemaRejects: true},
}

func TestCollectionSpecs(t *testing.T) {
	runSpecCases(t, collectionCases)
}
