package std

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Value specs: constants, defaults, truthiness routing and deliberate
// failure.

func valueSpecs() []Spec {
	valueOut := objectSchema(Object{"value": anyValue("The resulting value.")}, "value")
	coalesceIn := objectSchema(Object{
		"value":    anyValue("The preferred value; may be null or absent."),
		"fallback": anyValue("Returned when value is null or absent."),
	}, "fallback")
	return []Spec{
		stdSpec("coalesce", "Return value when it is not null, otherwise fallback.",
			coalesceIn, valueOut, ok(coalesce)),
		stdSpec("default_if_none", "Alias of coalesce: return fallback only when value is null or absent.",
			coalesceIn, valueOut, ok(coalesce)),
		stdSpec("constant", "Return the given value unchanged.",
			objectSchema(Object{"value": anyValue("The value to return.")}, "value"),
			valueOut, ok(constant)),
		newSpec(StdSource, "truthy",
			`Route "truthy" or "falsey" by the truthiness of value (null, false, 0, "", [] and {} are falsey) and return it as a boolean.`,
			[]string{"truthy", "falsey"},
			objectSchema(Object{"value": anyValue("The value to test.")}, "value"),
			objectSchema(Object{"value": typed("boolean", "Whether value is truthy.")}, "value"),
			truthy),
		stdSpec("runtime_error", `Fail the run with the error "message" or "message: details".`,
			objectSchema(Object{
				"message": typed("string", "The error message."),
				"details": anyValue("Optional details appended to the message; strings verbatim, other values as JSON."),
			}, "message"),
			objectSchema(Object{}), runtimeError),
	}
}

func coalesce(in Object) (Object, error) {
	fallback, err := requiredValue(in, "fallback")
	if err != nil {
		return nil, err
	}
	if v := in["value"]; v != nil {
		return Object{"value": v}, nil
	}
	return Object{"value": fallback}, nil
}

func constant(in Object) (Object, error) {
	v, err := requiredValue(in, "value")
	if err != nil {
		return nil, err
	}
	return Object{"value": v}, nil
}

func truthy(in Object) (string, Object, error) {
	v, err := requiredValue(in, "value")
	if err != nil {
		return "", nil, err
	}
	if isTruthy(v) {
		return "truthy", Object{"value": true}, nil
	}
	return "falsey", Object{"value": false}, nil
}

// runtimeError always fails. Empty details (null, "", [] or {}) add
// nothing to the message.
func runtimeError(in Object) (string, Object, error) {
	msg, err := stringField(in, "message")
	if err != nil {
		return "", nil, err
	}
	if msg == "" {
		msg = "runtime error"
	}
	if details := in["details"]; !emptyDetails(details) {
		msg = fmt.Sprintf("%s: %s", msg, formatDetails(details))
	}
	return "", nil, errors.New(msg)
}

// emptyDetails reports details that add nothing: null, "", [] and {}.
// false and 0 are kept, they say something.
func emptyDetails(v any) bool {
	if v == nil {
		return true
	}
	if s, ok := v.(string); ok {
		return s == ""
	}
	if a, ok := asArray(v); ok {
		return len(a) == 0
	}
	if o, ok := asObject(v); ok {
		return len(o) == 0
	}
	return false
}

func formatDetails(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}
