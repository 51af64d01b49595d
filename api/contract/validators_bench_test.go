package contract

import (
	"bytes"
	"encoding/json"
	"testing"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"
)

// BenchmarkValidators validates one decoded workflow.runs.start params
// value against the method's params schema, as the contract compiles it
// (through actors/workflow/schema, on santhosh-tekuri/jsonschema) and as
// the library compiles it when called directly: what the contract's
// wrapping costs over the library (docs/performance.md, A request's
// params). Before the contract moved onto the workflows' library, the
// first case was google/jsonschema-go.
func BenchmarkValidators(b *testing.B) {
	c := Default()
	m := c.methods["workflow.runs.start"]
	schema := map[string]any{}
	for k, v := range m.params.node.(map[string]any) {
		schema[k] = v
	}
	defs := map[string]any{}
	for _, name := range c.compiler.reachable(m.params.node) {
		defs[name] = c.compiler.defs[name]
	}
	if len(defs) > 0 {
		schema["$defs"] = defs
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		b.Fatal(err)
	}
	doc, err := sjs.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		b.Fatal(err)
	}
	comp := sjs.NewCompiler()
	if err := comp.AddResource("mem:///params.json", doc); err != nil {
		b.Fatal(err)
	}
	other, err := comp.Compile("mem:///params.json")
	if err != nil {
		b.Fatal(err)
	}
	var value any
	if err := json.Unmarshal([]byte(`{"deployment_id":"echo-deployment","workflow_input":{"message":"hello, world","count":3,"tags":["a","b"]},"trace_range":{"start":0,"limit":20}}`), &value); err != nil {
		b.Fatal(err)
	}
	b.Run("contract", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := m.params.validate(value); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("santhosh-tekuri", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := other.Validate(value); err != nil {
				b.Fatal(err)
			}
		}
	})
}
