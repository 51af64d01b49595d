package std

import (
	"fmt"
	"sort"
	"strings"
)

// Object specs: reading keys and paths, projecting and renaming fields.

func objectSpecs() []Spec {
	valueOut := objectSchema(Object{"value": anyValue("The selected value, or null when missing.")}, "value")
	mappingOut := objectSchema(Object{"mapping": anyObject("The resulting object.")}, "mapping")
	return []Spec{
		stdSpec("pick_key", "Return mapping[key], or null when the key is missing.",
			objectSchema(Object{
				"mapping": anyObject("The object to read."),
				"key":     typed("string", "The key to select."),
			}, "mapping", "key"),
			valueOut, ok(pickKey)),
		stdSpec("pick_path",
			`Return the value at a dotted path of nested objects (e.g. "user.address.city"), or null when any step is missing, null or not an object.`,
			objectSchema(Object{
				"mapping": anyObject("The object to read."),
				"path":    typed("string", "Dot-separated keys; each segment is one object key."),
			}, "mapping", "path"),
			valueOut, ok(pickPath)),
		stdSpec("project_fields", "Return a new object with only the listed fields that exist in mapping.",
			objectSchema(Object{
				"mapping": anyObject("The object to project."),
				"fields":  arrayOf(typed("string", "A field name."), "The field names to keep."),
			}, "mapping", "fields"),
			mappingOut, ok(projectFields)),
		stdSpec("rename_fields",
			"Return a new object holding, for each source->target pair in renames whose source exists in mapping, mapping[source] under target. Fields not named in renames are dropped.",
			objectSchema(Object{
				"mapping": anyObject("The object to read."),
				"renames": mapOf(typed("string", "The new field name."), "Source field name -> target field name; targets must be distinct."),
			}, "mapping", "renames"),
			mappingOut, ok(renameFields)),
	}
}

func pickKey(in Object) (Object, error) {
	mapping, err := objectField(in, "mapping")
	if err != nil {
		return nil, err
	}
	key, err := stringField(in, "key")
	if err != nil {
		return nil, err
	}
	return Object{"value": mapping[key]}, nil
}

func pickPath(in Object) (Object, error) {
	mapping, err := objectField(in, "mapping")
	if err != nil {
		return nil, err
	}
	path, err := stringField(in, "path")
	if err != nil {
		return nil, err
	}
	return Object{"value": lookupPath(mapping, path)}, nil
}

// lookupPath walks dotted object keys; a missing key, a null or a
// non-object on the way yields nil.
func lookupPath(mapping Object, path string) any {
	var current any = mapping
	for _, part := range strings.Split(path, ".") {
		obj, ok := asObject(current)
		if !ok {
			return nil
		}
		current = obj[part]
		if current == nil {
			return nil
		}
	}
	return current
}

func projectFields(in Object) (Object, error) {
	mapping, err := objectField(in, "mapping")
	if err != nil {
		return nil, err
	}
	fields, err := stringItemsField(in, "fields")
	if err != nil {
		return nil, err
	}
	out := make(Object, len(fields))
	for _, f := range fields {
		if v, present := mapping[f]; present {
			out[f] = v
		}
	}
	return Object{"mapping": out}, nil
}

func renameFields(in Object) (Object, error) {
	mapping, err := objectField(in, "mapping")
	if err != nil {
		return nil, err
	}
	renames, err := stringMapField(in, "renames")
	if err != nil {
		return nil, err
	}
	if err := distinctTargets(renames); err != nil {
		return nil, err
	}
	out := make(Object, len(renames))
	for source, target := range renames {
		if v, present := mapping[source]; present {
			out[target] = v
		}
	}
	return Object{"mapping": out}, nil
}

// distinctTargets rejects two sources renamed to one target: which value
// would win is otherwise unspecified.
func distinctTargets(renames map[string]string) error {
	sources := make([]string, 0, len(renames))
	for source := range renames {
		sources = append(sources, source)
	}
	sort.Strings(sources)
	seen := make(map[string]string, len(renames))
	for _, source := range sources {
		target := renames[source]
		if first, dup := seen[target]; dup {
			return fmt.Errorf("input field %q: sources %q and %q are both renamed to %q", "renames", first, source, target)
		}
		seen[target] = source
	}
	return nil
}
