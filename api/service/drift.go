package service

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// liveCheckTimeout bounds each upstream probe of a live check.
const liveCheckTimeout = 8 * time.Second

// liveCheck probes every bound, enabled upstream connection through its long-lived
// session: a catalog refresh that fails is source_unreachable.
func (s *Service) liveCheck(ctx context.Context, d store.Deployment, a store.Artifact) []protocol.DependencyDiag {
	bound := map[string]string{}
	for _, b := range d.Bindings {
		bound[b.LogicalSource] = b.ConcreteSource
	}
	probe := map[string]string{} // concrete -> a logical ref that needs it
	for _, req := range a.RequiredCapabilities {
		if concrete, ok := bound[req.Ref.Source]; ok && s.isEnabledConnection(concrete) {
			probe[concrete] = req.Ref.Source + "." + req.Ref.CapabilityKey
		}
	}
	ids := make([]string, 0, len(probe))
	for id := range probe {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var diags []protocol.DependencyDiag
	for _, id := range ids {
		pctx, cancel := context.WithTimeout(ctx, liveCheckTimeout)
		_, err := s.Supervisor.RefreshCatalog(pctx, id)
		cancel()
		if err != nil {
			diags = append(diags, diagError("source_unreachable", probe[id], &id, fmt.Sprintf("connection %q did not answer: %v", id, err), "check the connection's server and its status"))
		}
	}
	return diags
}
