package schema_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow/schema"
)

// obj decodes a JSON schema literal.
func obj(t testing.TB, s string) schema.Object {
	t.Helper()
	var o schema.Object
	if err := json.Unmarshal([]byte(s), &o); err != nil {
		t.Fatalf("bad schema literal %s: %v", s, err)
	}
	return o
}

// val decodes a JSON instance literal.
func val(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad instance literal %s: %v", s, err)
	}
	return v
}

func TestValidate(t *testing.T) {
	const itemsSchema = `{
		"type": "object",
		"properties": {
			"items": {
				"type": "array",
				"items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}
			}
		}
	}`
	const draft07 = `{
		"$schema": "http://json-schema.org/draft-07/schema#",
		"type": "object",
		"definitions": {"point": {"type": "object", "required": ["x"], "properties": {"x": {"type": "number"}}}},
		"properties": {"at": {"$ref": "#/definitions/point"}},
		"dependencies": {"a": ["b"]}
	}`
	const stateSchema = `{
		"type": "object",
		"reducer": {"kind": "merge"},
		"properties": {
			"messages": {"type": "array", "items": {"type": "string"}, "reducer": "append"},
			"count": {"type": "integer", "reducer": "sum"}
		}
	}`

	tests := []struct {
		name     string
		schema   string
		instance string
		want     string // full Error(); "" means valid
		path     string
		rule     string
		others   int
	}{
		{name: "type ok", schema: `{"type":"string"}`, instance: `"x"`},
		{
			name: "type mismatch at root", schema: `{"type":"string"}`, instance: `1`,
			want: `at (root): type: expected string, got number`, path: "", rule: "type",
		},
		{
			name: "type mismatch nested", schema: `{"properties":{"a":{"properties":{"b":{"type":"string"}}}}}`, instance: `{"a":{"b":true}}`,
			want: `at /a/b: type: expected string, got boolean`, path: "/a/b", rule: "type",
		},
		{
			name: "integer", schema: `{"type":"integer"}`, instance: `1.5`,
			want: `at (root): type: expected integer, got number`, rule: "type",
		},
		{name: "integral float is an integer", schema: `{"type":"integer"}`, instance: `2.0`},
		{
			name: "required", schema: `{"type":"object","required":["id","name"]}`, instance: `{"id":1}`,
			want: `at /name: required: missing property "name"`, path: "/name", rule: "required",
		},
		{
			name: "required several", schema: `{"required":["a","b"]}`, instance: `{}`,
			want: `at /a: required: missing property "a" (and 1 more)`, path: "/a", rule: "required", others: 1,
		},
		{
			name: "nested array item path", schema: itemsSchema, instance: `{"items":[{"name":"a"},{"name":"b"},{}]}`,
			want: `at /items/2/name: required: missing property "name"`, path: "/items/2/name", rule: "required",
		},
		{
			name: "nested array item type", schema: itemsSchema, instance: `{"items":[{"name":"a"},{"name":7}]}`,
			want: `at /items/1/name: type: expected string, got number`, path: "/items/1/name", rule: "type",
		},
		{name: "nested array ok", schema: itemsSchema, instance: `{"items":[{"name":"a"}]}`},
		{
			name:   "additionalProperties false",
			schema: `{"type":"object","properties":{"a":{}},"additionalProperties":false}`, instance: `{"a":1,"c":3,"b":2}`,
			want: `at /b: additionalProperties: property "b" is not allowed (and 1 more)`, path: "/b", rule: "additionalProperties", others: 1,
		},
		{name: "additionalProperties false ok", schema: `{"properties":{"a":{}},"additionalProperties":false}`, instance: `{"a":1}`},
		{
			name: "enum", schema: `{"enum":["low","high",3,null]}`, instance: `"mid"`,
			want: `at (root): enum: value "mid" is not one of "low", "high", 3, null`, rule: "enum",
		},
		{name: "enum ok", schema: `{"enum":["low","high",3,null]}`, instance: `3`},
		{
			name: "const object", schema: `{"properties":{"a/b":{"const":{"x":1}}}}`, instance: `{"a/b":2}`,
			want: `at /a~1b: const: value 2 is not {"x":1}`, path: "/a~1b", rule: "const",
		},
		{
			name: "minimum", schema: `{"minimum":1.5}`, instance: `1`,
			want: `at (root): minimum: 1 is less than 1.5`, rule: "minimum",
		},
		{
			name: "anyOf", schema: `{"properties":{"v":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`, instance: `{"v":1}`,
			want: `at /v: anyOf: value matches none of the 2 alternatives; #0: type: expected string, got number; #1: type: expected null, got number`,
			path: "/v", rule: "anyOf",
		},
		{
			name: "oneOf matches two", schema: `{"oneOf":[{"type":"number"},{"type":"integer"}]}`, instance: `1`,
			want: `at (root): oneOf: value matches alternatives #0 and #1, but must match exactly one`, rule: "oneOf",
		},
		{
			name: "false schema", schema: `{"properties":{"a":false}}`, instance: `{"a":1}`,
			want: `at /a: false: no value is allowed here`, path: "/a", rule: "false",
		},
		{
			name: "draft-07 definitions and $ref", schema: draft07, instance: `{"at":{"y":1}}`,
			want: `at /at/x: required: missing property "x"`, path: "/at/x", rule: "required",
		},
		{
			name: "draft-07 $ref type", schema: draft07, instance: `{"at":{"x":"1"}}`,
			want: `at /at/x: type: expected number, got string`, path: "/at/x", rule: "type",
		},
		{
			name: "draft-07 dependencies", schema: draft07, instance: `{"a":1}`,
			want: `at /b: dependencies: missing property "b" (required when "a" is present)`, path: "/b", rule: "dependencies",
		},
		{name: "draft-07 ok", schema: draft07, instance: `{"at":{"x":1},"a":1,"b":2}`},
		{
			name:   "draft-07 style without $schema",
			schema: `{"definitions":{"p":{"required":["x"]}},"properties":{"p":{"$ref":"#/definitions/p"}}}`, instance: `{"p":{}}`,
			want: `at /p/x: required: missing property "x"`, path: "/p/x", rule: "required",
		},
		{
			name: "draft-07 tuple items without $schema", schema: `{"items":[{"type":"string"}],"additionalItems":false}`, instance: `["a",1]`,
			want: `at (root): additionalItems: array has 1 more items than allowed`, rule: "additionalItems",
		},
		{
			name: "draft-07 format is asserted", schema: `{"$schema":"http://json-schema.org/draft-07/schema#","format":"email"}`, instance: `"nope"`,
			want: `at (root): format: "nope" is not a valid email: missing @`, rule: "format",
		},
		{name: "2020-12 format is an annotation", schema: `{"format":"email"}`, instance: `"nope"`},
		{name: "2020-12 $defs", schema: `{"$defs":{"s":{"type":"string"}},"items":{"$ref":"#/$defs/s"}}`, instance: `["a","b"]`},
		{name: "unknown keyword reducer ignored", schema: stateSchema, instance: `{"messages":["hi"],"count":2}`},
		{
			name: "unknown keyword reducer does not hide other rules", schema: stateSchema, instance: `{"messages":"hi"}`,
			want: `at /messages: type: expected array, got string`, path: "/messages", rule: "type",
		},
		{name: "empty schema accepts object", schema: `{}`, instance: `{"a":[1,2,{"b":null}]}`},
		{name: "empty schema accepts null", schema: `{}`, instance: `null`},
		{name: "empty schema accepts number", schema: `{}`, instance: `3.25`},
		{
			name: "unsupported pattern is not enforced", schema: `{"type":"string","pattern":"^(?!admin).*$"}`, instance: `"admin"`,
		},
		{
			name: "pattern", schema: `{"type":"string","pattern":"^[a-z]+$"}`, instance: `"A1"`,
			want: `at (root): pattern: "A1" does not match pattern "^[a-z]+$"`, rule: "pattern",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			v := schema.New(16)
			err := v.Validate(obj(t, tt.schema), val(t, tt.instance))
			if tt.want == "" {
				is.NoErr(err)
				return
			}
			is.True(err != nil) // expected a violation
			var vio *schema.Violation
			is.True(errors.As(err, &vio)) // error is a *Violation
			is.Equal(err.Error(), tt.want)
			is.Equal(vio.Path, tt.path)
			is.Equal(vio.Rule, tt.rule)
			is.Equal(len(vio.Others), tt.others)
			is.True(!errors.Is(err, schema.ErrInvalidSchema))
		})
	}
}

func TestValidateNilAndEmptySchema(t *testing.T) {
	is := is.New(t)
	v := schema.New(4)
	for _, inst := range []any{nil, true, 1.0, "s", []any{1.0}, map[string]any{"a": 1.0}} {
		is.NoErr(v.Validate(nil, inst))
		is.NoErr(v.Validate(schema.Object{}, inst))
	}
	is.NoErr(v.Check(nil))
	is.Equal(v.Stats().Compiles, uint64(0)) // nothing to compile
}

func TestViolationOthersSorted(t *testing.T) {
	is := is.New(t)
	s := obj(t, `{
		"type": "object",
		"required": ["z"],
		"properties": {"a": {"type": "string"}, "b": {"type": "array", "items": {"type": "integer"}}}
	}`)
	err := schema.New(4).Validate(s, val(t, `{"a":1,"b":[1,"x",2,"y"]}`))
	var vio *schema.Violation
	is.True(errors.As(err, &vio))
	got := []string{fmt.Sprintf("%s %s", vio.Path, vio.Rule)}
	for _, o := range vio.Others {
		got = append(got, fmt.Sprintf("%s %s", o.Path, o.Rule))
	}
	is.Equal(got, []string{"/a type", "/b/1 type", "/b/3 type", "/z required"})
	is.Equal(err.Error(), `at /a: type: expected string, got number (and 3 more)`)
}

func TestViolationErrorFormat(t *testing.T) {
	is := is.New(t)
	is.Equal((&schema.Violation{Path: "/a/b", Rule: "type", Message: "expected string, got number"}).Error(),
		`at /a/b: type: expected string, got number`)
	is.Equal((&schema.Violation{Rule: "required", Message: `missing property "x"`}).Error(),
		`at (root): required: missing property "x"`)
}

func TestInvalidSchema(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   string
	}{
		{"bad type name", `{"type":"strin"}`, `invalid JSON schema: at /type: anyOf: value matches none of the 2 alternatives; #0: enum: value "strin" is not one of "array", "boolean", "integer", "null", "number", "object", "string"; #1: type: expected array, got string`},
		{"required not an array", `{"required":"x"}`, `invalid JSON schema: at /required: type: expected array, got string`},
		{"nested bad keyword", `{"properties":{"a":{"minLength":-1}}}`, `invalid JSON schema: at /properties/a/minLength: minimum: -1 is less than 0`},
		{"dangling local $ref", `{"$ref":"#/definitions/nope"}`, `invalid JSON schema: json-pointer in "#/definitions/nope" not found`},
		{"bad regexp", `{"pattern":"(["}`, ``}, // RE2 can't compile it: Validate tolerates, Check rejects (below)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			v := schema.New(4)
			s := obj(t, tt.schema)
			checkErr := v.Check(s)
			is.True(errors.Is(checkErr, schema.ErrInvalidSchema))
			if tt.want == "" {
				return
			}
			is.Equal(checkErr.Error(), tt.want)
			err := v.Validate(s, "anything")
			is.True(errors.Is(err, schema.ErrInvalidSchema))
			var vio *schema.Violation
			is.True(!errors.As(err, &vio)) // a broken schema is not an instance violation
			is.Equal(err.Error(), tt.want)
		})
	}
}

func TestCheckUnsupportedPattern(t *testing.T) {
	is := is.New(t)
	v := schema.New(4)
	s := obj(t, `{"properties":{"user":{"type":"string","pattern":"^(?!admin$).+$"}}}`)
	is.NoErr(v.Validate(s, val(t, `{"user":"admin"}`))) // not enforced at run time
	err := v.Check(s)
	is.True(errors.Is(err, schema.ErrInvalidSchema))
	is.Equal(err.Error(), `invalid JSON schema: unsupported regular expression "^(?!admin$).+$" (RE2 syntax is required)`)
	is.NoErr(v.Check(obj(t, `{"pattern":"^[a-z]+$"}`)))
}

func TestRemoteRefRefused(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		_, _ = w.Write([]byte(`{"type":"string"}`))
	}))
	defer srv.Close()

	file := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(file, []byte(`{"type":"string"}`), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		schema schema.Object
		url    string
	}{
		{"http $ref", schema.Object{"$ref": srv.URL + "/s.json"}, srv.URL + "/s.json"},
		{"nested http $ref", schema.Object{"properties": map[string]any{"a": map[string]any{"$ref": srv.URL + "/s.json#/x"}}}, srv.URL + "/s.json"},
		{"relative $ref", schema.Object{"$ref": "other.json"}, "other.json"},
		{"file $ref", schema.Object{"$ref": "file://" + filepath.ToSlash(file)}, "file://" + filepath.ToSlash(file)},
		{"remote $schema", schema.Object{"$schema": srv.URL + "/meta"}, srv.URL + "/meta"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			err := schema.New(4).Validate(tt.schema, "x")
			is.True(errors.Is(err, schema.ErrInvalidSchema))
			is.True(errors.Is(err, schema.ErrRemoteRef))
			is.Equal(err.Error(), fmt.Sprintf("invalid JSON schema: remote reference not allowed: %q", tt.url))
		})
	}
	if n := requests.Load(); n != 0 {
		t.Fatalf("validator made %d HTTP requests", n)
	}
}

func TestStandardMetaSchemaRefIsBuiltIn(t *testing.T) {
	// The standard meta-schemas are embedded in the validator; referring to
	// one fetches nothing and works.
	is := is.New(t)
	v := schema.New(4)
	s := schema.Object{"$ref": "http://json-schema.org/draft-07/schema#"}
	is.NoErr(v.Validate(s, val(t, `{"type":"string"}`)))
	err := v.Validate(s, val(t, `{"type":5}`))
	var vio *schema.Violation
	is.True(errors.As(err, &vio))
	is.Equal(vio.Path, "/type")
}

func TestCacheHit(t *testing.T) {
	is := is.New(t)
	v := schema.New(8)
	// Same content built independently (and in a different key order) is
	// one cache entry.
	a := obj(t, `{"type":"object","required":["x"],"properties":{"x":{"type":"number"}}}`)
	b := obj(t, `{"properties":{"x":{"type":"number"}},"required":["x"],"type":"object"}`)
	for range 10 {
		is.NoErr(v.Validate(a, val(t, `{"x":1}`)))
		is.True(v.Validate(b, val(t, `{}`)) != nil)
	}
	is.NoErr(v.Check(a))
	st := v.Stats()
	is.Equal(st.Compiles, uint64(1))
	is.Equal(st.Misses, uint64(1))
	is.Equal(st.Hits, uint64(20))
	is.Equal(st.Entries, 1)

	// Invalid schemas are cached too: the error is computed once.
	bad := obj(t, `{"type":"strin"}`)
	is.True(v.Validate(bad, 1.0) != nil)
	is.True(v.Check(bad) != nil)
	is.Equal(v.Stats().Compiles, uint64(2))
}

func TestCacheKeyIsContent(t *testing.T) {
	// Mutating the caller's map after use changes its key; it must never
	// change the cached compilation of the old content.
	is := is.New(t)
	v := schema.New(8)
	s := obj(t, `{"type":"string"}`)
	is.NoErr(v.Validate(s, "x"))
	s["type"] = "number"
	is.True(v.Validate(s, "x") != nil)
	is.NoErr(v.Validate(obj(t, `{"type":"string"}`), "x"))
	is.Equal(v.Stats().Compiles, uint64(2))

	// Numbers of equal value but different Go representation are distinct
	// keys, yet validate the same way.
	is.True(v.Validate(schema.Object{"maximum": 3}, 4.0) != nil)
	is.True(v.Validate(schema.Object{"maximum": 3.0}, 4.0) != nil)
	is.True(v.Validate(schema.Object{"maximum": json.Number("3")}, 4.0) != nil)
}

func TestCacheBound(t *testing.T) {
	is := is.New(t)
	v := schema.New(2)
	a := schema.Object{"type": "string"}
	b := schema.Object{"type": "number"}
	c := schema.Object{"type": "boolean"}

	is.NoErr(v.Validate(a, "s"))
	is.NoErr(v.Validate(b, 1.0))
	is.NoErr(v.Validate(a, "s")) // a is now most recently used
	is.NoErr(v.Validate(c, true))
	st := v.Stats()
	is.Equal(st.Entries, 2)
	is.Equal(st.Compiles, uint64(3))

	is.NoErr(v.Validate(a, "s")) // kept
	is.NoErr(v.Validate(c, true))
	is.Equal(v.Stats().Compiles, uint64(3))

	is.NoErr(v.Validate(b, 1.0)) // evicted, compiled again; evicts a
	is.Equal(v.Stats().Compiles, uint64(4))
	is.Equal(v.Stats().Entries, 2)

	for i := range 100 {
		is.NoErr(v.Validate(schema.Object{"maxLength": float64(i)}, ""))
	}
	is.Equal(v.Stats().Entries, 2)
}

func TestNewDefaultsBound(t *testing.T) {
	is := is.New(t)
	v := schema.New(0)
	for i := range 10 {
		is.NoErr(v.Validate(schema.Object{"maxLength": float64(i)}, ""))
	}
	is.Equal(v.Stats().Entries, 10)
	is.True(schema.Default != nil)
	is.NoErr(schema.Default.Validate(schema.Object{"type": "string"}, "x"))
}

func TestCompiledHandle(t *testing.T) {
	is := is.New(t)
	v := schema.New(4)
	c, err := v.Compile(obj(t, `{"type":"object","required":["a"]}`))
	is.NoErr(err)
	is.NoErr(c.Validate(val(t, `{"a":1}`)))
	var vio *schema.Violation
	is.True(errors.As(c.Validate(val(t, `{}`)), &vio))
	is.Equal(vio.Path, "/a")

	empty, err := v.Compile(nil)
	is.NoErr(err)
	is.NoErr(empty.Validate("anything"))
}

func TestConcurrentUse(t *testing.T) {
	is := is.New(t)
	v := schema.New(64)
	const distinct = 8
	schemas := make([]schema.Object, distinct)
	for i := range schemas {
		schemas[i] = schema.Object{
			"type":     "object",
			"required": []any{"n"},
			"properties": map[string]any{
				"n": map[string]any{"type": "integer", "maximum": float64(i)},
			},
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				k := (g + i) % distinct
				s := schemas[k]
				if err := v.Validate(s, map[string]any{"n": float64(k)}); err != nil {
					errs <- fmt.Errorf("valid instance rejected: %w", err)
					return
				}
				err := v.Validate(s, map[string]any{"n": float64(k + 1)})
				var vio *schema.Violation
				if !errors.As(err, &vio) || vio.Path != "/n" || vio.Rule != "maximum" {
					errs <- fmt.Errorf("schema %d: unexpected result %v", k, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st := v.Stats()
	is.Equal(st.Compiles, uint64(distinct)) // each schema compiled exactly once
	is.Equal(st.Entries, distinct)
}

// A typical MCP tool input schema and argument object.
const benchSchema = `{
	"type": "object",
	"properties": {
		"query": {"type": "string", "minLength": 1},
		"limit": {"type": "integer", "minimum": 1, "maximum": 100},
		"tags": {"type": "array", "items": {"type": "string"}},
		"mode": {"enum": ["fast", "exact"]}
	},
	"required": ["query"],
	"additionalProperties": false
}`

const benchInstance = `{"query":"weather in Paris","limit":10,"tags":["a","b"],"mode":"fast"}`

func BenchmarkValidateCached(b *testing.B) {
	v := schema.New(16)
	s, inst := obj(b, benchSchema), val(b, benchInstance)
	if err := v.Validate(s, inst); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Validate(s, inst); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompiledValidate(b *testing.B) {
	c, err := schema.New(16).Compile(obj(b, benchSchema))
	if err != nil {
		b.Fatal(err)
	}
	inst := val(b, benchInstance)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Validate(inst); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateCachedParallel(b *testing.B) {
	v := schema.New(16)
	s, inst := obj(b, benchSchema), val(b, benchInstance)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := v.Validate(s, inst); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
