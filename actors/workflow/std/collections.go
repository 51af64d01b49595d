package std

import (
	"errors"
	"strings"
)

// List specs: selecting, counting, filtering and joining items.

func collectionSpecs() []Spec {
	itemsIn := objectSchema(Object{"items": arrayOf(anyValue("An item."), "The list to read.")}, "items")
	nonEmptyIn := objectSchema(Object{"items": nonEmptyArrayOf(anyValue("An item."), "The list to read; must not be empty.")}, "items")
	itemOut := objectSchema(Object{"item": anyValue("The selected item.")}, "item")
	maybeItemOut := objectSchema(Object{"item": anyValue("The selected item, or null when the list is empty.")}, "item")
	objectsIn := func(extra Object, required ...string) Object {
		props := Object{"items": arrayOf(anyObject("An item."), "The list of objects to read.")}
		for k, v := range extra {
			props[k] = v
		}
		return objectSchema(props, append([]string{"items"}, required...)...)
	}
	objectsOut := objectSchema(Object{"items": arrayOf(anyObject("A kept item."), "The kept items, in input order.")}, "items")

	return []Spec{
		stdSpec("first_item", "Return the first item of a non-empty list; an empty list fails the step.",
			nonEmptyIn, itemOut, ok(firstItem)),
		stdSpec("first_item_or_none", "Return the first item of a list, or null when it is empty.",
			itemsIn, maybeItemOut, ok(firstItemOrNone)),
		newSpec(StdSource, "first_item_maybe",
			`Return the first item and route "found", or route "missing" with a null item when the list is empty.`,
			[]string{"found", "missing"}, itemsIn, maybeItemOut, firstItemMaybe),
		stdSpec("last_item", "Return the last item of a non-empty list; an empty list fails the step.",
			nonEmptyIn, itemOut, ok(lastItem)),
		stdSpec("last_item_or_none", "Return the last item of a list, or null when it is empty.",
			itemsIn, maybeItemOut, ok(lastItemOrNone)),
		stdSpec("length", "Count the items of a list.",
			itemsIn, objectSchema(Object{"count": typed("integer", "The number of items.")}, "count"), ok(length)),
		stdSpec("is_empty", "Return whether a list has no items.",
			itemsIn, objectSchema(Object{"value": typed("boolean", "True when the list is empty.")}, "value"), ok(isEmpty)),
		stdSpec("filter_items",
			"Keep the objects whose item[key] equals value (deep JSON equality). A missing key reads as null, so value null also keeps items without the key.",
			objectsIn(Object{
				"key":   typed("string", "The key to compare."),
				"value": anyValue("The value item[key] must equal."),
			}, "key", "value"),
			objectsOut, ok(filterItems)),
		stdSpec("filter_items_present", "Keep the objects that contain key, whatever its value (null included).",
			objectsIn(Object{"key": typed("string", "The key that must be present.")}, "key"),
			objectsOut, ok(filterItemsPresent)),
		stdSpec("extract_field", "Return item[field] for each object that contains field, in order; objects without it are skipped.",
			objectsIn(Object{"field": typed("string", "The field to extract.")}, "field"),
			objectSchema(Object{"values": arrayOf(anyValue("An extracted value."), "The extracted values.")}, "values"),
			ok(extractField)),
		stdSpec("concat", "Join a list of strings with separator (default empty).",
			objectSchema(Object{
				"items":     arrayOf(typed("string", "A string."), "The strings to join."),
				"separator": withDefault(typed("string", "Inserted between consecutive items."), ""),
			}, "items"),
			objectSchema(Object{"text": typed("string", "The joined text.")}, "text"),
			ok(concat)),
	}
}

var errNoItems = errors.New(`input field "items": expected at least one item, got an empty array`)

func firstItem(in Object) (Object, error) {
	items, err := arrayField(in, "items")
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, errNoItems
	}
	return Object{"item": items[0]}, nil
}

func firstItemOrNone(in Object) (Object, error) {
	items, err := arrayField(in, "items")
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return Object{"item": nil}, nil
	}
	return Object{"item": items[0]}, nil
}

func firstItemMaybe(in Object) (string, Object, error) {
	items, err := arrayField(in, "items")
	if err != nil {
		return "", nil, err
	}
	if len(items) == 0 {
		return "missing", Object{"item": nil}, nil
	}
	return "found", Object{"item": items[0]}, nil
}

func lastItem(in Object) (Object, error) {
	items, err := arrayField(in, "items")
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, errNoItems
	}
	return Object{"item": items[len(items)-1]}, nil
}

func lastItemOrNone(in Object) (Object, error) {
	items, err := arrayField(in, "items")
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return Object{"item": nil}, nil
	}
	return Object{"item": items[len(items)-1]}, nil
}

func length(in Object) (Object, error) {
	items, err := arrayField(in, "items")
	if err != nil {
		return nil, err
	}
	return Object{"count": float64(len(items))}, nil
}

func isEmpty(in Object) (Object, error) {
	items, err := arrayField(in, "items")
	if err != nil {
		return nil, err
	}
	return Object{"value": len(items) == 0}, nil
}

func filterItems(in Object) (Object, error) {
	items, err := objectItemsField(in, "items")
	if err != nil {
		return nil, err
	}
	key, err := stringField(in, "key")
	if err != nil {
		return nil, err
	}
	want, err := requiredValue(in, "value")
	if err != nil {
		return nil, err
	}
	kept := []any{}
	for _, item := range items {
		if jsonEqual(item[key], want) {
			kept = append(kept, item)
		}
	}
	return Object{"items": kept}, nil
}

func filterItemsPresent(in Object) (Object, error) {
	items, err := objectItemsField(in, "items")
	if err != nil {
		return nil, err
	}
	key, err := stringField(in, "key")
	if err != nil {
		return nil, err
	}
	kept := []any{}
	for _, item := range items {
		if _, present := item[key]; present {
			kept = append(kept, item)
		}
	}
	return Object{"items": kept}, nil
}

func extractField(in Object) (Object, error) {
	items, err := objectItemsField(in, "items")
	if err != nil {
		return nil, err
	}
	field, err := stringField(in, "field")
	if err != nil {
		return nil, err
	}
	values := []any{}
	for _, item := range items {
		if v, present := item[field]; present {
			values = append(values, v)
		}
	}
	return Object{"values": values}, nil
}

func concat(in Object) (Object, error) {
	items, err := stringItemsField(in, "items")
	if err != nil {
		return nil, err
	}
	sep, err := optionalStringField(in, "separator", "")
	if err != nil {
		return nil, err
	}
	return Object{"text": strings.Join(items, sep)}, nil
}
