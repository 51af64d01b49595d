package service

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// remarshal converts between JSON-shaped values, through their JSON;
// unknown fields are errors.
func remarshal(in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(out)
}

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
