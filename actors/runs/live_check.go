package runs

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// liveCheckTimeout bounds each upstream probe of a live check.
const liveCheckTimeout = 8 * time.Second

// LiveCheck probes every bound, enabled upstream connection an artifact's
// requirements use, through its long-lived session, in the order of their
// ids: a catalog refresh that fails is source_unreachable, naming one
// logical ref that needs the connection.
func (m *Manager) LiveCheck(ctx context.Context, d store.Deployment, a store.Artifact) []Diagnostic {
	bound := map[string]string{}
	for _, b := range d.Bindings {
		bound[b.LogicalSource] = b.ConcreteSource
	}
	probe := map[string]string{} // concrete -> a logical ref that needs it
	for _, req := range a.RequiredCapabilities {
		if concrete, ok := bound[req.Ref.Source]; ok && m.cfg.Connections.Enabled(concrete) {
			probe[concrete] = req.Ref.Source + "." + req.Ref.CapabilityKey
		}
	}
	var diags []Diagnostic
	for _, id := range workflow.SortedKeys(probe) {
		pctx, cancel := context.WithTimeout(ctx, liveCheckTimeout)
		_, err := m.cfg.Supervisor.RefreshCatalog(pctx, id)
		cancel()
		if err != nil {
			diags = append(diags, DiagError("source_unreachable", probe[id], &id, fmt.Sprintf("connection %q did not answer: %v", id, err), "check the connection's server and its status"))
		}
	}
	return diags
}
