package cli

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/mcpflow/mcpflow/api/jsonrpc"
)

// userMessage is err as the CLI prints it for people: a JSON-RPC error
// without its "jsonrpc CODE Message:" preamble, said in words with what to
// do (the code stays where it tells the repair: -32001, -32003). With
// -o json, scripts get the error as it is, code and all.
func userMessage(err error, json bool) string {
	msg := err.Error()
	e, ok := errors.AsType[*jsonrpc.Error](err)
	if !ok || json {
		return msg
	}
	return strings.Replace(msg, e.Error(), rpcMessage(e), 1)
}

// rpcMessage is a JSON-RPC error in a user's words.
func rpcMessage(e *jsonrpc.Error) string {
	detail := e.Detail()
	switch e.Code {
	case jsonrpc.OperationFailed:
		if detail == "" {
			return "the server could not do it"
		}
		return detail
	case jsonrpc.InvalidParams:
		return "invalid request: " + strings.TrimPrefix(detail, "invalid params: ")
	case jsonrpc.Unauthenticated:
		return fmt.Sprintf("the server wants a valid token (%d): pass --token or set $%s", e.Code, envToken)
	case jsonrpc.Forbidden:
		return fmt.Sprintf("refused (%d): %s", e.Code, firstSet(detail, "the token lacks the scope this needs: use a token with it"))
	case jsonrpc.Overloaded:
		return "the server is busy: " + firstSet(detail, "too many requests in flight") + "; try again shortly"
	case jsonrpc.RequestTimeout:
		return "the server did not finish in time: " + firstSet(detail, "the request timed out") + "; raise --timeout, or try again"
	case jsonrpc.MethodNotFound:
		return "the server does not know this method (" + firstSet(detail, "method not found") + "): is it an older mcpflow? Compare mcpflow version with the server's"
	}
	if detail == "" {
		return e.Message
	}
	return e.Message + ": " + detail
}

// refused reports whether err is a refused TCP connection: nothing
// listens at the address.
func refused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(err.Error(), "connection refused")
}

// unreachableHint is what a refused connection to url tells the user to do.
func unreachableHint(url string) string {
	return fmt.Sprintf("no mcpflow server answers at %s: start one with `mcpflow serve` (from a clone: `go run ./cmd/mcpflow serve`), or point --url or $%s at yours", url, envURL)
}
