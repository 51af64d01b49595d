package std

// Small builders for the JSON Schema objects the specs declare. They keep
// every schema in plain JSON shape (Object, []any) so it survives a JSON
// round trip unchanged and validates with any JSON Schema implementation.

// objectSchema is an object schema with the given properties, of which the
// named ones are required.
func objectSchema(props Object, required ...string) Object {
	s := Object{"type": "object", "properties": props}
	if len(required) > 0 {
		names := make([]any, len(required))
		for i, name := range required {
			names[i] = name
		}
		s["required"] = names
	}
	return s
}

// anyValue is a schema accepting any JSON value, null included.
func anyValue(description string) Object {
	return Object{"description": description}
}

// typed is a schema for one JSON type.
func typed(jsonType, description string) Object {
	return Object{"type": jsonType, "description": description}
}

// arrayOf is an array schema whose items match items.
func arrayOf(items Object, description string) Object {
	return Object{"type": "array", "items": items, "description": description}
}

// nonEmptyArrayOf is arrayOf with at least one item.
func nonEmptyArrayOf(items Object, description string) Object {
	s := arrayOf(items, description)
	s["minItems"] = 1
	return s
}

// mapOf is an object schema whose every property value matches values.
func mapOf(values Object, description string) Object {
	return Object{"type": "object", "additionalProperties": values, "description": description}
}

// anyObject is a schema for any JSON object.
func anyObject(description string) Object {
	return typed("object", description)
}

// withDefault returns s with a "default" annotation.
func withDefault(s Object, value any) Object {
	s["default"] = value
	return s
}
