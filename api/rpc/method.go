package rpc

import (
	"context"
	"encoding/json"

	"github.com/mcpflow/mcpflow/api/access"
)

// Handler serves one method: params are the raw JSON object already
// checked against the contract.
type Handler func(ctx context.Context, params json.RawMessage) (any, error)

// Method is one entry of the method table: the scope a caller's token
// needs (see package access), the handler, and, for a method whose calls
// are costly to hold open at once, how many may run at once.
type Method struct {
	Scope   access.Scope
	Handler Handler
	// MaxConcurrent bounds the calls of this method running at once
	// across the whole server: every WebSocket connection, every /rpc
	// request and every face in the process (edge.Local) share its
	// places. A call past it is refused at once with -32000 (Overloaded),
	// after its scope and params are checked; it never waits for a place.
	// 0: no bound of its own, beyond the in-flight slots of the caller's
	// connection.
	MaxConcurrent int
	// Busy names, in that refusal, what the calls are doing ("runs
	// starting" reads "too many runs starting at once: ..."); empty reads
	// "<method> calls".
	Busy string
	// Pushes marks a method whose handler pushes notifications to its
	// caller's connection (a subscription, or its end): over WebSocket
	// it runs with the connection's notifier in its context
	// (NotifierFrom), which delivers nothing before the method's reply.
	// Every other method runs without one, at no cost per request.
	Pushes bool
}
