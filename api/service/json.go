package service

import (
	"github.com/mcpflow/mcpflow/actors/jsonconv"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// remarshal converts between JSON-shaped values, through their JSON;
// unknown fields are errors.
func remarshal(in, out any) error { return jsonconv.Strict(in, out) }

// toObject turns a document into a fresh JSON object (null becomes {}).
func toObject(v any) (workflow.Object, error) { return workflow.ObjectOf(v) }
