package service

import (
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// toObject turns a document into a fresh JSON object (null becomes {}).
func toObject(v any) (workflow.Object, error) { return workflow.ObjectOf(v) }
