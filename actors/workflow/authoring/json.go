package authoring

import "github.com/mcpflow/mcpflow/actors/jsonconv"

// jsonList is the JSON form of a list of bindings, [] when empty.
func jsonList[T any](items []T) ([]any, error) {
	out := []any{}
	if len(items) == 0 {
		return out, nil
	}
	if err := jsonconv.Strict(items, &out); err != nil {
		return nil, err
	}
	return out, nil
}
