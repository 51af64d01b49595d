package service

import (
	"errors"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
)

// Domain error codes carried in the data of a 5000 error. They keep the
// reference system's names, so its clients can keep branching on them.
const (
	codeNotFound = "KeyError"     // a named record or capability does not exist
	codeInvalid  = "ValueError"   // a value is not acceptable
	codeUpstream = "RuntimeError" // an upstream MCP server or the store failed
	codeFull     = "StoreFull"    // the store's disk is full: nothing was written
)

func notFound(format string, args ...any) error {
	return jsonrpc.Failed(codeNotFound, fmt.Sprintf(format, args...))
}

func invalid(format string, args ...any) error {
	return jsonrpc.Failed(codeInvalid, fmt.Sprintf(format, args...))
}

func upstream(format string, args ...any) error {
	return jsonrpc.Failed(codeUpstream, fmt.Sprintf(format, args...))
}

func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.InvalidParams, Message: fmt.Sprintf(format, args...)}
}

// storeErr maps a store error: a missing record is a not-found domain
// error, a full disk StoreFull, anything else an upstream failure. what
// names the record.
func storeErr(err error, what string) error {
	switch {
	case errors.Is(err, store.ErrPruned):
		return notFound("%s not found (pruned): its retention had passed since it finished", what)
	case errors.Is(err, store.ErrNotFound):
		return notFound("unknown %s", what)
	case errors.Is(err, store.ErrConflict):
		return invalid("%s: %v", what, err)
	case errors.Is(err, store.ErrFull):
		return jsonrpc.Failed(codeFull, fmt.Sprintf("%s: %v; free space on the store's disk (reads are still served)", what, err))
	default:
		return upstream("%s: %v", what, err)
	}
}
