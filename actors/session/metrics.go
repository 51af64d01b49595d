package session

import (
	"time"

	"github.com/mcpflow/mcpflow/actors/metrics"
)

// observe reports the actor's gauges after each message: whether its
// session is open, and the calls it has in flight and queued. Once the
// actor has stopped they are all zero.
func (a *Actor) observe() {
	if a.gauges == nil {
		a.gauges = a.opts.Metrics.Session(a.conn.ID) // nil without metrics
	}
	a.gauges.Set(a.session != nil, len(a.running), len(a.queue))
}

// observeCall records how long a call or read took on the session, from
// the moment it was sent; listings are not calls.
func (a *Actor) observeCall(f *inflight, outcome string, err error) {
	tool := metrics.ResourceRead
	switch {
	case f.w.call != nil:
		tool = f.w.call.Tool
	case f.w.read == nil:
		return
	}
	a.opts.Metrics.ToolCall(a.conn.ID, tool, metrics.OutcomeOf(outcome, err), time.Since(f.started))
}
