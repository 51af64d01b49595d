package workflow

import (
	"fmt"

	"github.com/mcpflow/mcpflow/actors/jsonconv"
)

// ObjectOf is a fresh JSON object holding the document v (null becomes
// {}), sharing nothing with it.
func ObjectOf(v any) (Object, error) {
	var obj Object
	if err := jsonconv.Strict(v, &obj); err != nil {
		return nil, fmt.Errorf("document as a JSON object: %w", err)
	}
	if obj == nil {
		obj = Object{}
	}
	return obj, nil
}
