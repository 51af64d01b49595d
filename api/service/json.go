package service

import (
	"fmt"

	"github.com/mcpflow/mcpflow/actors/jsonconv"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// remarshal converts between JSON-shaped values, through their JSON;
// unknown fields are errors.
func remarshal(in, out any) error { return jsonconv.Strict(in, out) }

// toObject turns a document into a fresh JSON object (null becomes {}).
func toObject(v any) (workflow.Object, error) {
	var obj workflow.Object
	if err := remarshal(v, &obj); err != nil {
		return nil, fmt.Errorf("document as a JSON object: %w", err)
	}
	if obj == nil {
		obj = workflow.Object{}
	}
	return obj, nil
}
