package jsonrpc_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/jsonrpc"
)

func TestErrorsUseTheStandardMessages(t *testing.T) {
	tests := []struct {
		code int
		want string
	}{
		{jsonrpc.ParseError, "Parse error"},
		{jsonrpc.InvalidRequest, "Invalid Request"},
		{jsonrpc.MethodNotFound, "Method not found"},
		{jsonrpc.InvalidParams, "Invalid params"},
		{jsonrpc.InternalError, "Internal error"},
		{jsonrpc.Overloaded, "Server overloaded"},
		{jsonrpc.RequestTimeout, "Request timed out"},
		{jsonrpc.OperationFailed, "Workflow operation failed"},
		{-32005, "Server error"},
	}
	is := is.New(t)
	for _, tt := range tests {
		is.Equal(jsonrpc.Errorf(tt.code, "").Message, tt.want) // message for tt.code
	}
}

func TestErrorsEncodeTheReferenceShapes(t *testing.T) {
	tests := []struct {
		name string
		err  *jsonrpc.Error
		want string
	}{
		{"domain failure", jsonrpc.Failed("KeyError", "deployment 'd1' not found"),
			`{"jsonrpc":"2.0","id":1,"error":{"code":5000,"message":"Workflow operation failed","data":{"code":"KeyError","message":"deployment 'd1' not found"}}}`},
		{"invalid params with a detail", jsonrpc.Errorf(jsonrpc.InvalidParams, "params.%s: must be >= 1", "revision"),
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"message":"params.revision: must be >= 1"}}}`},
		{"no detail, no data", jsonrpc.Errorf(jsonrpc.Overloaded, ""),
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Server overloaded"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			out, err := jsonrpc.EncodeReply(false, []jsonrpc.Response{jsonrpc.NewError(jsonrpc.IntID(1), tt.err)})
			is.NoErr(err)
			is.Equal(string(out), tt.want)
		})
	}
}

func TestAsErrorFindsWrappedErrorsAndHidesOthers(t *testing.T) {
	is := is.New(t)
	failed := jsonrpc.Failed("ValueError", "revision mismatch")
	is.Equal(jsonrpc.AsError(fmt.Errorf("save workspace: %w", failed)), failed)

	internal := jsonrpc.AsError(errors.New("disk on fire"))
	is.Equal(internal.Code, jsonrpc.InternalError)
	is.Equal(internal.Data, nil) // the cause is not leaked
	is.Equal(jsonrpc.AsError(nil), nil)
	is.Equal(failed.Error(), "jsonrpc 5000 Workflow operation failed: revision mismatch")
}

func TestEveryInvalidParamsErrorTakesOneShape(t *testing.T) {
	detail := func(path, reason string) jsonrpc.ParamsDetail {
		return jsonrpc.ParamsDetail{Path: path, Reason: reason, Message: path + ": " + reason}
	}
	tests := []struct {
		name string
		in   *jsonrpc.Error
		want jsonrpc.ParamsDetail
	}{
		{"built with a path", jsonrpc.InvalidParamsAt("params.trace_range.limit", "must be <= 100"), detail("params.trace_range.limit", "must be <= 100")},
		{"built without a path", jsonrpc.InvalidParamsAt("", "must be an object"), detail("params", "must be an object")},
		{"Errorf with a path", jsonrpc.Errorf(jsonrpc.InvalidParams, "params.%s: must be >= 1", "revision"), detail("params.revision", "must be >= 1")},
		{"Errorf with an index path", jsonrpc.Errorf(jsonrpc.InvalidParams, `params.input_map["a.b"]: must be a string`), detail(`params.input_map["a.b"]`, "must be a string")},
		{"the detail in the message", &jsonrpc.Error{Code: jsonrpc.InvalidParams, Message: "invalid params: step_id must not be empty"}, detail("params", "step_id must not be empty")},
		{"a path in the message", &jsonrpc.Error{Code: jsonrpc.InvalidParams, Message: `invalid params: params: unknown key "x"`}, detail("params", `unknown key "x"`)},
		{"a colon that is no path", jsonrpc.Errorf(jsonrpc.InvalidParams, "entry: kind must be mcp"), detail("params", "entry: kind must be mcp")},
		{"no detail at all", jsonrpc.Errorf(jsonrpc.InvalidParams, ""), detail("params", "invalid")},
		{"decoded from the wire", &jsonrpc.Error{Code: jsonrpc.InvalidParams, Message: "Invalid params", Data: map[string]any{"message": "params.limit: must be >= 1"}}, detail("params.limit", "must be >= 1")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			got := jsonrpc.NormalizeInvalidParams(tt.in)
			is.Equal(got.Code, jsonrpc.InvalidParams)
			is.Equal(got.Message, "Invalid params")
			is.Equal(got.Data, tt.want)
			is.Equal(jsonrpc.NormalizeInvalidParams(got), got) // already normal
		})
	}
	other := jsonrpc.Failed("ValueError", "x")
	is.New(t).Equal(jsonrpc.NormalizeInvalidParams(other), other) // other codes pass as they are
}
