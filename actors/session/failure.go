package session

import (
	"context"
	"errors"
	"net"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/reply"
)

// Errors a call can fail with before reaching the upstream server, or
// because its session died. Each has a failure code (reply.Register), so
// that errors.Is holds for the error of a ToolResult wherever it is read.
var (
	ErrOverloaded  = reply.Register("overloaded", errors.New("too many calls queued for this connection"))
	ErrUnavailable = reply.Register("unavailable", errors.New("connection unavailable"))
	ErrDeadline    = reply.Register("deadline", errors.New("deadline passed before the call could start"))
	ErrCancelled   = reply.Register("cancelled", errors.New("call cancelled by its owner"))
	// ErrDegraded means the connection restarted too often within the
	// policy's window: calls fail fast until a background probe
	// connects. It wraps ErrUnavailable.
	ErrDegraded = reply.Register("degraded", &childError{msg: "connection degraded", parent: ErrUnavailable})
	// ErrNeedsLogin means the source needs an OAuth login (`mcpflow
	// sources login`): calls fail fast until one replaces the session
	// actor. It wraps ErrUnavailable.
	ErrNeedsLogin = reply.Register("needs_login", &childError{msg: "needs_login", parent: ErrUnavailable})
	// ErrRetired means the call reached a session actor that stopped
	// before it sent the call upstream (its connection reconfigured,
	// disabled, moved to another node, its actor replaced): the call
	// never ran, and may be asked again of the connection's next session
	// actor. It wraps ErrUnavailable.
	ErrRetired = reply.Register("retired", &childError{msg: "retired", parent: ErrUnavailable})
	// ErrSessionLost means the session died while the call was in flight
	// (the server process exited, the HTTP session expired under it, a
	// keepalive failed, the connection broke): whether the server ran the
	// call is unknown. Its text, "session_lost", starts the error.
	ErrSessionLost = reply.Register("session_lost", errors.New("session_lost"))
	// ErrProtocol means the server answered the request with a JSON-RPC
	// error: the session works, the request failed. The error is also the
	// server's *jsonrpc.Error (errors.As) where it was made.
	ErrProtocol = reply.Register("protocol", errors.New("upstream protocol error"))
	// ErrResultTooLarge means the server's answer to the call (a tool's
	// result, a resource's contents) passed the connection's bound on
	// one answer (max_result_bytes): it was not read past the bound, and
	// the session goes on. Its text, "result_too_large", starts the error.
	ErrResultTooLarge = reply.Register("result_too_large", errors.New("result_too_large"))
	// ErrTaskFailed means the upstream task the call ran as ended
	// failed; the error carries the task's status message.
	ErrTaskFailed = reply.Register("task_failed", errors.New("task_failed"))
	// ErrTaskCancelled means the upstream task ended cancelled, by
	// someone other than the call's owner (its own cancel fails the call
	// with ErrCancelled).
	ErrTaskCancelled = reply.Register("task_cancelled", errors.New("task_cancelled"))
	// ErrTaskLost means the upstream task can no longer be reached: the
	// session it was created on ended with it (a stdio server's process,
	// an HTTP session the server forgot), or the server no longer knows
	// the task. Whether it ran is unknown, so it is also ErrSessionLost:
	// a step safe to repeat is called again (as a new task), another
	// routes session_lost or fails. Its text, "task_lost", starts the
	// error.
	ErrTaskLost = reply.Register("task_lost", &childError{msg: "task_lost", parent: ErrSessionLost})
)

// protocolError is a JSON-RPC error the server answered with: it is
// ErrProtocol, with the text of the error it wraps.
type protocolError struct{ error }

func (e protocolError) Is(target error) bool { return target == ErrProtocol }
func (e protocolError) Unwrap() error        { return e.error }

// childError is a sentinel that is also its parent.
type childError struct {
	msg    string
	parent error
}

func (e *childError) Error() string { return e.msg }
func (e *childError) Unwrap() error { return e.parent }

// failure is how a request on a session failed.
type failure int

const (
	// failNone: the server answered (a tool error is an answer too).
	failNone failure = iota
	// failDeadline: the call's own deadline passed, or its owner
	// cancelled it; the session is not to blame.
	failDeadline
	// failProtocol: the server answered with a JSON-RPC error; the
	// session works.
	failProtocol
	// failUnsent: the server never ran the request: it no longer knows
	// the session (HTTP 404 or 400), or the request never reached it (the
	// connection was refused). The session is over; the request may be
	// sent again on a new one.
	failUnsent
	// failLost: the session broke under the request (EOF, connection
	// closed or reset): the outcome is unknown and the session is over.
	failLost
)

// Codes go-sdk's JSON-RPC layer uses for its own failures, never a
// server's answer: the client or server is closing, or the transport
// rejected the message.
var transportCodes = []int64{-32003, -32004, -32005}

// expiring is implemented by transports that notice an expired session
// (httpTransport).
type expiring interface{ SessionExpired() bool }

// classify tells how err, returned by a request on a session made with
// transport t, failed.
func classify(err error, t mcp.Transport) failure {
	if err == nil {
		return failNone
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return failDeadline
	}
	if errors.Is(err, mcp.ErrSessionMissing) {
		return failUnsent
	}
	if l, ok := t.(loginWatcher); ok && l.needsLogin() != nil {
		return failUnsent // the request never went out: it has no token
	}
	if e, ok := t.(expiring); ok && e.SessionExpired() {
		return failUnsent
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return failUnsent
	}
	for _, code := range transportCodes {
		if errors.Is(err, &jsonrpc.Error{Code: code}) {
			return failLost
		}
	}
	var wire *jsonrpc.Error
	if errors.As(err, &wire) {
		return failProtocol
	}
	return failLost
}
