package std

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// Helpers over JSON values as encoding/json decodes them into any. They
// also accept the equivalent Go shapes a caller may build by hand (typed
// slices, maps with string keys, integer types), so a value means the same
// thing whether it came off the wire or out of Go code.

// typeName names the JSON type of v for error messages.
func typeName(v any) string {
	if v == nil {
		return "null"
	}
	if _, ok := v.(bool); ok {
		return "boolean"
	}
	if _, ok := v.(string); ok {
		return "string"
	}
	if _, ok := asNumber(v); ok {
		return "number"
	}
	if _, ok := asArray(v); ok {
		return "array"
	}
	if _, ok := asObject(v); ok {
		return "object"
	}
	return fmt.Sprintf("non-JSON value %T", v)
}

// asNumber reports v as a float64 when it is a JSON number. Booleans are
// not numbers.
func asNumber(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case nil, bool, string:
		return 0, false
	}
	rv := reflect.ValueOf(v)
	switch {
	case rv.CanFloat():
		return rv.Float(), true
	case rv.CanInt():
		return float64(rv.Int()), true
	case rv.CanUint():
		return float64(rv.Uint()), true
	}
	return 0, false
}

// asArray reports v as a []any when it is a JSON array.
func asArray(v any) ([]any, bool) {
	switch a := v.(type) {
	case []any:
		return a, true
	case nil, string, bool, float64, map[string]any:
		return nil, false
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return nil, false
	}
	if rv.Kind() == reflect.Slice && rv.IsNil() {
		return nil, false
	}
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out, true
}

// asObject reports v as an Object when it is a JSON object.
func asObject(v any) (Object, bool) {
	switch o := v.(type) {
	case map[string]any:
		return o, o != nil
	case nil, string, bool, float64, []any:
		return nil, false
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Map || rv.Type().Key().Kind() != reflect.String || rv.IsNil() {
		return nil, false
	}
	out := make(Object, rv.Len())
	iter := rv.MapRange()
	for iter.Next() {
		out[iter.Key().String()] = iter.Value().Interface()
	}
	return out, true
}

// jsonEqual is deep equality of JSON values: numbers compare by value
// whatever their Go type, objects by key set and values, arrays by order
// and values. A boolean never equals a number.
func jsonEqual(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	}
	if x, ok := asNumber(a); ok {
		y, ok := asNumber(b)
		return ok && x == y
	}
	if x, ok := asArray(a); ok {
		y, ok := asArray(b)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	if x, ok := asObject(a); ok {
		y, ok := asObject(b)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, present := y[k]
			if !present || !jsonEqual(xv, yv) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// isTruthy is JSON truthiness: null, false, 0, "", [] and {} are false;
// every other value is true.
func isTruthy(v any) bool {
	if v == nil {
		return false
	}
	switch x := v.(type) {
	case bool:
		return x
	case string:
		return x != ""
	}
	if n, ok := asNumber(v); ok {
		return n != 0
	}
	if a, ok := asArray(v); ok {
		return len(a) > 0
	}
	if o, ok := asObject(v); ok {
		return len(o) > 0
	}
	return true
}

// deepCopy copies the containers of a JSON value; scalars are shared.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return x
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	case []string:
		return append([]string(nil), x...)
	}
	return v
}

// copyObject is deepCopy for an Object.
func copyObject(o Object) Object {
	if o == nil {
		return nil
	}
	return deepCopy(map[string]any(o)).(map[string]any)
}
