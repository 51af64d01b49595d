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
// needs (see package access), the handler, and how many calls of the
// method one client connection may have in flight at once (0: no bound of
// its own beyond the connection's).
type Method struct {
	Scope   access.Scope
	Handler Handler
	// PerClient bounds this method's concurrent calls per client
	// connection; a call past it is refused at once.
	PerClient int
}
