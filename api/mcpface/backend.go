package mcpface

import (
	"context"
	"encoding/json"
)

// Backend is the workflow API as the face reaches it: the edge's method
// table in process (edge.Server.Local), or a running server through the Go
// client (client.Client), for `mcpflow mcp` over stdio. The principal is
// the backend's: the edge's Local is bound to one, a client to its token.
type Backend interface {
	// Call invokes method with params (encoded as JSON) and decodes its
	// result into result, which may be nil. A refusal or a domain failure
	// is a *jsonrpc.Error.
	Call(ctx context.Context, method string, params, result any) error
	// Subscribe calls method, one of the subscribe methods
	// (workflow.runs.subscribe, workflow.admin.events.subscribe), decodes
	// its result into result, and hands each notification of the
	// subscription it opened to deliver, in the order the server sent
	// them, until the subscription ends (after the run's last event, or a
	// lag notification) or ctx ends. deliver is called only after result
	// is decoded (it may be before Subscribe returns), never after ctx has
	// ended, one call at a time; it must not block for long.
	Subscribe(ctx context.Context, method string, params, result any, deliver func(method string, params json.RawMessage)) error
}
