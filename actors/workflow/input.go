package workflow

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// ValidateInput checks a workflow input against the workflow's input
// schema. An empty schema accepts any object.
func ValidateInput(schema, input Object) error {
	if len(schema) == 0 {
		return nil
	}
	data, err := json.Marshal(schema)
	if err != nil {
		return fmt.Errorf("input schema: %w", err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("input schema: %w", err)
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		return fmt.Errorf("input schema: %w", err)
	}
	if input == nil {
		input = Object{}
	}
	if err := resolved.Validate(map[string]any(input)); err != nil {
		return fmt.Errorf("workflow input does not match the input schema: %w", err)
	}
	return nil
}
