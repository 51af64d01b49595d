package contract

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
)

//go:embed workflow-api.manifest.json
var manifestJSON []byte

// manifest mirrors the parts of the manifest file this package reads. Schemas stay decoded
// JSON (map[string]any or bool), the form the validator and the error explainer both walk.
type manifest struct {
	Operations []operation `json:"operations"`
	// Notifications are what the server pushes to subscriptions (an
	// mcpflow extension): JSON-RPC requests without an id.
	Notifications []notification `json:"notifications"`
	Components    struct {
		Schemas map[string]any `json:"schemas"`
	} `json:"components"`
}

// operation is one JSON-RPC method.
type operation struct {
	Method string `json:"method"`
	// Extension marks a method mcpflow adds to the reference contract.
	Extension bool    `json:"extension"`
	Params    []param `json:"params"`
	Result    struct {
		Schema any `json:"schema"`
	} `json:"result"`
}

// notification is one notification method and the schema of its params.
type notification struct {
	Method string `json:"method"`
	Params struct {
		Schema any `json:"schema"`
	} `json:"params"`
}

// param is one by-name parameter.
type param struct {
	Name     string `json:"name"`
	Required bool   `json:"required"`
	Schema   any    `json:"schema"`
}

// The manifest refers to shared schemas as #/components/schemas/X; each compiled schema
// carries the ones it needs under $defs, so references are rewritten to #/$defs/X.
const (
	manifestRefPrefix = `"#/components/schemas/`
	defsRefPrefix     = "#/$defs/"
)

// parseManifest decodes a manifest, rewriting its schema references to point into $defs.
func parseManifest(data []byte) (*manifest, error) {
	data = bytes.ReplaceAll(data, []byte(manifestRefPrefix), []byte(`"`+defsRefPrefix))
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("decode manifest: %w", err)
	}
	if len(m.Operations) == 0 {
		return nil, errors.New("manifest lists no operations")
	}
	return &m, nil
}

// paramsSchema returns the object schema for a method's params: one property per param,
// the required ones listed as required, and no other keys allowed.
func paramsSchema(params []param) map[string]any {
	properties := make(map[string]any, len(params))
	required := []any{}
	for _, p := range params {
		properties[p.Name] = p.Schema
		if p.Required {
			required = append(required, p.Name)
		}
	}
	return map[string]any{
		"type":                 "object",
		"properties":           properties,
		"required":             required,
		"additionalProperties": false,
	}
}

// Manifest returns a copy of the embedded manifest file, as written: for
// generators that derive code from the contract (the console's typed
// TypeScript client, api/console/gen).
func Manifest() []byte {
	return bytes.Clone(manifestJSON)
}
