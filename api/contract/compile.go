package contract

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// compiler turns schema nodes from the manifest into validators. Each distinct node
// (compared by its JSON text) is compiled at most once, with the component schemas it
// reaches under its own $defs.
//
// Component schemas are decoded once and shared by every compiled node: jsonschema-go keeps
// what it learns while resolving in the Resolved value, not in the Schema, and only requires
// each root's schemas to form a tree, which holds since a component appears once per $defs.
type compiler struct {
	defs    map[string]any                // component schemas by name, as decoded JSON
	schemas map[string]*jsonschema.Schema // the same, decoded for jsonschema-go

	mu         sync.Mutex
	validators map[string]*validator // by the node's JSON text
}

// newCompiler decodes the component schemas.
func newCompiler(defs map[string]any) (*compiler, error) {
	c := &compiler{defs: defs, schemas: make(map[string]*jsonschema.Schema, len(defs)), validators: map[string]*validator{}}
	for name, def := range defs {
		s, err := decodeSchema(def)
		if err != nil {
			return nil, fmt.Errorf("component %s: %w", name, err)
		}
		c.schemas[name] = s
	}
	return c, nil
}

// validator checks values against one schema node. It compiles on first use.
type validator struct {
	node    any                                  // the schema as decoded JSON: map[string]any or bool
	compile func() (*jsonschema.Resolved, error) // runs once
}

// validator returns the shared validator for node.
func (c *compiler) validator(node any) *validator {
	key, err := json.Marshal(node) // map keys are sorted, so equal nodes get equal keys
	if err != nil {                // unreachable for decoded JSON
		return &validator{node: node, compile: func() (*jsonschema.Resolved, error) {
			return nil, fmt.Errorf("encode schema: %w", err)
		}}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.validators[string(key)]
	if !ok {
		v = &validator{node: node}
		v.compile = sync.OnceValues(func() (*jsonschema.Resolved, error) { return c.resolve(node) })
		c.validators[string(key)] = v
	}
	return v
}

// validate reports whether value (decoded JSON) matches the schema. A schema that does not
// compile is reported as an error wrapping errCompile, never as a validation failure.
func (v *validator) validate(value any) error {
	rs, err := v.compile()
	if err != nil {
		return fmt.Errorf("%w: %w", errCompile, err)
	}
	return rs.Validate(value)
}

// resolve compiles node, with the component schemas it refers to, directly or not, under $defs.
// Defaults are checked against their schemas too, so a manifest whose defaults contradict
// their own schemas does not load.
func (c *compiler) resolve(node any) (*jsonschema.Resolved, error) {
	schema, err := decodeSchema(node)
	if err != nil {
		return nil, err
	}
	if names := c.reachable(node); len(names) > 0 {
		schema.Defs = make(map[string]*jsonschema.Schema, len(names))
		for _, name := range names {
			schema.Defs[name] = c.schemas[name]
		}
	}
	rs, err := schema.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		return nil, fmt.Errorf("resolve schema: %w", err)
	}
	return rs, nil
}

// decodeSchema converts a schema from decoded JSON to a jsonschema.Schema.
func decodeSchema(node any) (*jsonschema.Schema, error) {
	data, err := json.Marshal(node)
	if err != nil {
		return nil, fmt.Errorf("encode schema: %w", err)
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(data, &schema); err != nil {
		return nil, fmt.Errorf("decode schema: %w", err)
	}
	return &schema, nil
}

// reachable returns the names of the component schemas node refers to, directly or through
// other components. Unknown names are left out; resolving then reports the dangling reference.
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
