package jsonrpc

import (
	"errors"
	"fmt"
	"strings"
)

// Error codes. The first five come from the JSON-RPC 2.0 specification; -32000 to -32019 are
// implementation-defined (MCP reserves -32020 to -32099, so mcpflow stays below -32020);
// 5000 is the reference system's domain error.
const (
	ParseError     = -32700 // the frame is not valid JSON
	InvalidRequest = -32600 // the JSON is not a valid request object
	MethodNotFound = -32601 // no such method, or a reserved "rpc." name
	InvalidParams  = -32602 // params do not match the method's contract
	InternalError  = -32603 // a bug or an unexpected failure on our side

	Overloaded      = -32000 // too many requests in flight; retry later
	Unauthenticated = -32001 // no bearer token, or one that matches none configured
	RequestTimeout  = -32002 // the request did not finish before its deadline
	Forbidden       = -32003 // the token lacks the scope the method needs, or the Origin or Host is refused

	OperationFailed = 5000 // an expected domain failure; Data is an [ErrorData] with a code
)

// messages holds the fixed message for each code; details go in [ErrorData].
var messages = map[int]string{
	ParseError:      "Parse error",
	InvalidRequest:  "Invalid Request",
	MethodNotFound:  "Method not found",
	InvalidParams:   "Invalid params",
	InternalError:   "Internal error",
	Overloaded:      "Server overloaded",
	RequestTimeout:  "Request timed out",
	Unauthenticated: "Unauthenticated",
	Forbidden:       "Forbidden",
	OperationFailed: "Workflow operation failed",
}

// Message returns the fixed message for a code, or "Server error" for codes this package does not define.
func Message(code int) string {
	if m, ok := messages[code]; ok {
		return m
	}
	return "Server error"
}

// Error is the error member of a response. It implements error, so handlers can return it
// as is and [AsError] will find it through any wrapping.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// ErrorData is the data member this package writes: the reference system's shape
// ({"code", "message"} for 5000, {"message"} for the other codes).
type ErrorData struct {
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
}

// Errorf returns an error with the fixed message for code and the formatted text as data.message.
// An empty text leaves data out.
func Errorf(code int, format string, args ...any) *Error {
	e := &Error{Code: code, Message: Message(code)}
	if detail := fmt.Sprintf(format, args...); detail != "" {
		e.Data = ErrorData{Message: detail}
	}
	return e
}

// ParamsDetail is the data of every -32602 mcpflow sends, in one shape: where the params
// break the method's contract (Path, "params" for the params as a whole, else a
// dotted path such as "params.trace_range.limit" or `params.input_map["a.b"]`) and why
// (Reason, such as "must be >= 1" or `unknown key "foo"`). Message is Path + ": " + Reason,
// so that clients reading data.message, as for the other codes, keep working.
type ParamsDetail struct {
	Path    string `json:"path"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// InvalidParamsAt returns a -32602 "Invalid params" with a [ParamsDetail] as data.
func InvalidParamsAt(path, reason string) *Error {
	if path == "" {
		path = "params"
	}
	if reason == "" {
		reason = "invalid"
	}
	return &Error{Code: InvalidParams, Message: Message(InvalidParams), Data: ParamsDetail{Path: path, Reason: reason, Message: path + ": " + reason}}
}

// NormalizeInvalidParams returns e unchanged unless it is a -32602 not yet in the
// [ParamsDetail] shape; such an error is rewritten to that shape, its detail (data.message,
// or a message other than the standard one, less an "invalid params: " prefix) split into
// path and reason when it starts with a params path ("params.limit: must be >= 1"), else
// taken whole as the reason about "params".
func NormalizeInvalidParams(e *Error) *Error {
	if e == nil || e.Code != InvalidParams {
		return e
	}
	if d, ok := e.Data.(ParamsDetail); ok && e.Message == Message(InvalidParams) {
		return InvalidParamsAt(d.Path, d.Reason)
	}
	detail := e.Detail()
	if detail == "" && e.Message != Message(InvalidParams) {
		detail = e.Message
	}
	for _, prefix := range []string{"invalid params: ", "invalid params"} {
		if len(detail) >= len(prefix) && strings.EqualFold(detail[:len(prefix)], prefix) {
			detail = detail[len(prefix):]
			break
		}
	}
	if path, reason, ok := strings.Cut(detail, ": "); ok && isParamsPath(path) {
		return InvalidParamsAt(path, reason)
	}
	return InvalidParamsAt("params", detail)
}

// isParamsPath reports whether s reads as a path into the params: "params", or "params"
// followed by a member (".name") or an index ("[0]", `["key"]`).
func isParamsPath(s string) bool {
	rest, ok := strings.CutPrefix(s, "params")
	return ok && (rest == "" || rest[0] == '.' || rest[0] == '[')
}

// Failed returns the domain error 5000 "Workflow operation failed" with data {code, message},
// for example Failed("KeyError", "deployment 'd1' not found").
func Failed(code, message string) *Error {
	return &Error{Code: OperationFailed, Message: Message(OperationFailed), Data: ErrorData{Code: code, Message: message}}
}

// AsError returns the *Error in err's chain, or a bare -32603 "Internal error" when there is none,
// so that unexpected failures never leak their text to clients. It returns nil for a nil err.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	return &Error{Code: InternalError, Message: Message(InternalError)}
}

// Error formats the error as "jsonrpc <code> <message>", followed by data.message when there is one.
func (e *Error) Error() string {
	s := fmt.Sprintf("jsonrpc %d %s", e.Code, e.Message)
	if detail := e.Detail(); detail != "" {
		s += ": " + detail
	}
	return s
}

// Detail returns data.message, whether Data was built here or decoded from
// the wire: what the error says beyond its code's fixed message.
func (e *Error) Detail() string {
	switch d := e.Data.(type) {
	case ErrorData:
		return d.Message
	case ParamsDetail:
		return d.Message
	case map[string]any:
		s, _ := d["message"].(string)
		return s
	default:
		return ""
	}
}
