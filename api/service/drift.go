package service

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// liveCheckTimeout bounds each upstream probe of a live check.
const liveCheckTimeout = 8 * time.Second

// schemaDrift compares a requirement's saved schema hashes with the live
// ones. The drift policy sets the severity: block is an error, warn a
// warning, allow reports nothing.
func schemaDrift(req store.RequiredCapability, in, out workflow.Object, policy, ref, concrete string) *protocol.DependencyDiag {
	if policy == "allow" {
		return nil
	}
	changed := func(saved *string, live workflow.Object) bool {
		if saved == nil {
			return false
		}
		h, err := catalog.SchemaHash(live)
		return err == nil && h != *saved
	}
	if !changed(req.InputSchemaHash, in) && !changed(req.OutputSchemaHash, out) {
		return nil
	}
	severity := "error"
	if policy == "warn" {
		severity = "warning"
	}
	return &protocol.DependencyDiag{Severity: severity, Code: "schema_changed", LogicalRef: ref, BoundSource: &concrete,
		Message:    fmt.Sprintf("the schema of %q changed since the artifact was saved", ref),
		RepairHint: ptr("save a new artifact version against the current catalog, or set drift_policy to warn")}
}

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
