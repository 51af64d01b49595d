package contract

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mcpflow/mcpflow/actors/workflow/schema"
)

// compiler turns schema nodes from the manifest into validators. Each distinct node
// (compared by its JSON text) is compiled at most once, with the component schemas it
// reaches under its own $defs, by the workflows' own JSON Schema library
// (actors/workflow/schema, on santhosh-tekuri/jsonschema), so one library serves the
// contract and the workflows.
type compiler struct {
	defs map[string]any // component schemas by name, as decoded JSON
	// schemas compiles and caches the assembled schemas. It is the contract's own, not
	// schema.Default, so the contract's schemas and the workflows' do not evict each other.
	schemas *schema.Validator

	mu         sync.Mutex
	validators map[string]*validator // by the node's JSON text
}

// newCompiler keeps the component schemas.
func newCompiler(defs map[string]any) *compiler {
	return &compiler{defs: defs, schemas: schema.New(schema.DefaultMaxEntries), validators: map[string]*validator{}}
}

// validator checks values against one schema node. It compiles on first use.
type validator struct {
	node    any                              // the schema as decoded JSON: map[string]any or bool
	compile func() (*schema.Compiled, error) // runs once
}

// validator returns the shared validator for node.
func (c *compiler) validator(node any) *validator {
	key, err := json.Marshal(node) // map keys are sorted, so equal nodes get equal keys
	if err != nil {                // unreachable for decoded JSON
		return &validator{node: node, compile: func() (*schema.Compiled, error) {
			return nil, fmt.Errorf("encode schema: %w", err)
		}}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.validators[string(key)]
	if !ok {
		v = &validator{node: node}
		v.compile = sync.OnceValues(func() (*schema.Compiled, error) { return c.resolve(node) })
		c.validators[string(key)] = v
	}
	return v
}

// validate reports whether value (decoded JSON) matches the schema: nil, or a
// *schema.Violation naming the failing keywords. A schema that does not compile is reported
// as an error wrapping errCompile, never as a validation failure.
func (v *validator) validate(value any) error {
	compiled, err := v.compile()
	if err != nil {
		return fmt.Errorf("%w: %w", errCompile, err)
	}
	return compiled.Validate(value)
}

// falseSchema is the boolean schema false as an object schema: nothing matches it.
var falseSchema = schema.Object{"not": map[string]any{}}

// resolve compiles node, with the component schemas it refers to, directly or not, under
// $defs, as a draft 2020-12 schema (declared, so the library does not fall back to an older
// draft). A regular expression the library cannot enforce is a compile error here, as it is
// for the schemas of drafts: the contract must check every keyword it declares.
func (c *compiler) resolve(node any) (*schema.Compiled, error) {
	var root schema.Object
	switch n := node.(type) {
	case bool:
		if !n {
			root = falseSchema
		} // true accepts anything, as the empty schema does
	case map[string]any:
		root = make(schema.Object, len(n)+1)
		for k, v := range n {
			root[k] = v
		}
	default:
		return nil, fmt.Errorf("schema is %T, not an object or a boolean", node)
	}
	if names := c.reachable(node); len(names) > 0 {
		defs := make(map[string]any, len(names))
		for _, name := range names {
			defs[name] = c.defs[name]
		}
		root["$defs"] = defs
	}
	if _, declared := root["$schema"]; !declared && root != nil {
		root["$schema"] = schemaDialect
	}
	if err := c.schemas.Check(root); err != nil {
		return nil, fmt.Errorf("compile schema: %w", err)
	}
	compiled, err := c.schemas.Compile(root)
	if err != nil {
		return nil, fmt.Errorf("compile schema: %w", err)
	}
	return compiled, nil
}

// reachable returns the names of the component schemas node refers to, directly or through
// other components. Unknown names are left out; compiling then reports the dangling reference.
func (c *compiler) reachable(node any) []string {
	var found []string
	var visit func(any)
	visit = func(n any) {
		switch n := n.(type) {
		case map[string]any:
			for k, v := range n {
				ref, isRef := v.(string)
				if !isRef || k != "$ref" {
					visit(v)
					continue
				}
				name := strings.TrimPrefix(ref, defsRefPrefix)
				if def, ok := c.component(ref); ok && !slices.Contains(found, name) {
					found = append(found, name)
					visit(def)
				}
			}
		case []any:
			for _, v := range n {
				visit(v)
			}
		}
	}
	visit(node)
	return found
}

// component returns the schema a "$ref" points to, if it names a known component.
func (c *compiler) component(ref string) (any, bool) {
	name, ok := strings.CutPrefix(ref, defsRefPrefix)
	if !ok {
		return nil, false
	}
	def, ok := c.defs[name]
	return def, ok
}
