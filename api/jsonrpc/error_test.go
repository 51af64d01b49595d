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
