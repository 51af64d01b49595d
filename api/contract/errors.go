package contract

import "errors"

// ErrUnknownMethod is returned (wrapped) for a method the contract does not list; answer it with -32601.
var ErrUnknownMethod = errors.New("unknown method")

// errCompile marks a schema that failed to compile: a broken manifest, not a bad request.
var errCompile = errors.New("schema does not compile")

// ValidationError says where a value breaks the contract and why. Answer it with -32602
// and Error() as the detail.
type ValidationError struct {
	// Path locates the offending value: "params", "params.trace_range.limit",
	// "result.runs[0].status", `params.input_map["a.b"]`.
	Path string
	// Reason says what is wrong, e.g. "must be >= 1" or `unknown key "foo"`.
	Reason string
}

// Error returns "path: reason".
func (e *ValidationError) Error() string { return e.Path + ": " + e.Reason }
