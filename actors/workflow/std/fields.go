package std

import "fmt"

// Readers of a spec's input fields. Each error names the field and says
// what was expected, e.g. `input field "items": expected array, got string`.
// A field that is present with a JSON null counts as present; optional
// readers treat null like an absent field.

func fieldErr(name, want string, got any) error {
	return fmt.Errorf("input field %q: expected %s, got %s", name, want, typeName(got))
}

// itemField names item i of an array field, e.g. items[2].
func itemField(name string, i int) string {
	return fmt.Sprintf("%s[%d]", name, i)
}

func missingErr(name string) error {
	return fmt.Errorf("input field %q is required", name)
}

// requiredValue is a required field of any JSON type, null included.
func requiredValue(in Object, name string) (any, error) {
	v, ok := in[name]
	if !ok {
		return nil, missingErr(name)
	}
	return v, nil
}

// stringField is a required string field.
func stringField(in Object, name string) (string, error) {
	v, ok := in[name]
	if !ok {
		return "", missingErr(name)
	}
	s, ok := v.(string)
	if !ok {
		return "", fieldErr(name, "string", v)
	}
	return s, nil
}

// optionalStringField is a string field that defaults to def when absent
// or null.
func optionalStringField(in Object, name, def string) (string, error) {
	v, ok := in[name]
	if !ok || v == nil {
		return def, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fieldErr(name, "string", v)
	}
	return s, nil
}

// objectField is a required object field.
func objectField(in Object, name string) (Object, error) {
	v, ok := in[name]
	if !ok {
		return nil, missingErr(name)
	}
	o, ok := asObject(v)
	if !ok {
		return nil, fieldErr(name, "object", v)
	}
	return o, nil
}

// arrayField is a required array field.
func arrayField(in Object, name string) ([]any, error) {
	v, ok := in[name]
	if !ok {
		return nil, missingErr(name)
	}
	a, ok := asArray(v)
	if !ok {
		return nil, fieldErr(name, "array", v)
	}
	return a, nil
}

// objectItemsField is a required array field whose items are all objects.
func objectItemsField(in Object, name string) ([]Object, error) {
	items, err := arrayField(in, name)
	if err != nil {
		return nil, err
	}
	out := make([]Object, len(items))
	for i, item := range items {
		o, ok := asObject(item)
		if !ok {
			return nil, fieldErr(itemField(name, i), "object", item)
		}
		out[i] = o
	}
	return out, nil
}

// stringItemsField is a required array field whose items are all strings.
func stringItemsField(in Object, name string) ([]string, error) {
	items, err := arrayField(in, name)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(items))
	for i, item := range items {
		s, ok := item.(string)
		if !ok {
			return nil, fieldErr(itemField(name, i), "string", item)
		}
		out[i] = s
	}
	return out, nil
}

// stringMapField is a required object field whose values are all strings.
func stringMapField(in Object, name string) (map[string]string, error) {
	o, err := objectField(in, name)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(o))
	for k, v := range o {
		s, ok := v.(string)
		if !ok {
			return nil, fieldErr(fmt.Sprintf("%s.%s", name, k), "string", v)
		}
		out[k] = s
	}
	return out, nil
}
