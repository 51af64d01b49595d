package edge

import (
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// served is one entry of the table the edge dispatches on: the method,
// and the places its MaxConcurrent bound gives (nil: none).
type served struct {
	rpc.Method
	places slots
}

// serve makes m's entry, with places of its own when it is bounded.
func serve(m rpc.Method) served {
	e := served{Method: m}
	if m.MaxConcurrent > 0 {
		e.places = make(slots, m.MaxConcurrent)
	}
	return e
}

// overloaded is the refusal of a call of method past its MaxConcurrent:
// -32000 at once, the client may retry.
func (m served) overloaded(method string) *jsonrpc.Error {
	busy := m.Busy
	if busy == "" {
		busy = method + " calls"
	}
	return jsonrpc.Errorf(jsonrpc.Overloaded,
		"too many %s at once: %d %s calls in progress, the limit; retry later", busy, cap(m.places), method)
}
