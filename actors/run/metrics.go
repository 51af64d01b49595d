package run

import (
	"time"

	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// counted is the deployment a run is counted under in the run metrics:
// its own, or for a pass-through call (which has none) its artifact id,
// "passthrough:<connection>.<tool>", one per exposed tool.
func counted(r store.Run) string {
	if r.Kind == store.RunPassthrough {
		return r.ArtifactID
	}
	return r.DeploymentID
}

// observeStep records how long the step of f took, from its first
// attempt to its result r, by where it ran: a tool on a connection, a
// resource read on the connection its logical source is bound to, or a
// built-in (connection metrics.Builtin, tool its capability).
func (a *Actor) observeStep(f *inflight, r workflow.Result) {
	m := a.spec.Metrics
	if m == nil {
		return
	}
	t := a.spec.Targets[f.call.Capability]
	conn, tool := t.Connection, t.Tool
	switch {
	case t.Builtin != nil:
		conn, tool = metrics.Builtin, f.call.Capability
	case t.Resource:
		tool = metrics.ResourceRead
		if logical, _ := ResourceRef(f.call.Input); a.spec.Sources != nil {
			conn, _ = a.spec.Sources(logical)
		}
	}
	m.Step(conn, tool, metrics.OutcomeOf(r.Outcome, r.Err), time.Since(f.started))
}
