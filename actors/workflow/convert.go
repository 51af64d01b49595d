package workflow

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Convert turns one JSON-shaped value into another through its JSON;
// fields out does not have are errors.
func Convert(in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(out)
}

// ObjectOf is a fresh JSON object holding the document v (null becomes
// {}), sharing nothing with it.
func ObjectOf(v any) (Object, error) {
	var obj Object
	if err := Convert(v, &obj); err != nil {
		return nil, fmt.Errorf("document as a JSON object: %w", err)
	}
	if obj == nil {
		obj = Object{}
	}
	return obj, nil
}
