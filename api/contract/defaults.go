package contract

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// A manifest whose defaults contradict their own schemas does not load: every "default" is
// checked against the schema that declares it, as JSON Schema recommends where defaults are
// used (the console and the docs show them).

// Keywords whose value is a schema, a list of schemas, or a map of schemas by name.
var (
	schemaKeywords     = []string{"items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties"}
	schemaListKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	schemaMapKeywords  = []string{"properties", "patternProperties", "$defs", "dependentSchemas"}
)

// checkDefaults checks every default in node and in the schemas under it; at names where
// node sits, for the error.
func (c *compiler) checkDefaults(node any, at string) error {
	s := keywords(node)
	if s == nil {
		return nil
	}
	if d, ok := s["default"]; ok {
		err := c.validator(node).validate(d)
		if errors.Is(err, errCompile) {
			return fmt.Errorf("%s: %w", at, err)
		}
		if err != nil {
			return fmt.Errorf("%s: default %s does not match its schema: %w", at, literal(d), err)
		}
	}
	for _, kw := range schemaKeywords {
		if sub, ok := s[kw]; ok {
			if err := c.checkDefaults(sub, at+"/"+kw); err != nil {
				return err
			}
		}
	}
	for _, kw := range schemaListKeywords {
		for i, sub := range list(s[kw]) {
			if err := c.checkDefaults(sub, fmt.Sprintf("%s/%s/%d", at, kw, i)); err != nil {
				return err
			}
		}
	}
	for _, kw := range schemaMapKeywords {
		subs, _ := s[kw].(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(subs)) {
			if err := c.checkDefaults(subs[name], at+"/"+kw+"/"+name); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkManifestDefaults checks the defaults of every schema in the manifest: the components,
// each method's params and result, and each notification's params.
func (c *compiler) checkManifestDefaults(m *manifest) error {
	for _, name := range slices.Sorted(maps.Keys(m.Components.Schemas)) {
		if err := c.checkDefaults(m.Components.Schemas[name], "components/schemas/"+name); err != nil {
			return err
		}
	}
	for _, op := range m.Operations {
		for _, p := range op.Params {
			if err := c.checkDefaults(p.Schema, op.Method+"/params/"+p.Name); err != nil {
				return err
			}
		}
		if err := c.checkDefaults(op.Result.Schema, op.Method+"/result"); err != nil {
			return err
		}
	}
	for _, n := range m.Notifications {
		if err := c.checkDefaults(n.Params.Schema, n.Method+"/params"); err != nil {
			return err
		}
	}
	return nil
}
