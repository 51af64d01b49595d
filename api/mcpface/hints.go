package mcpface

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// hintCache reads capabilities' annotations through the API, once per
// capability in one load.
type hintCache struct {
	backend Backend
	known   map[string]*protocol.ToolHints // nil: not known
}

// unknownHints are what is assumed of a step nothing is known of (a
// capability the catalog lacks, a child workflow): MCP's defaults.
var unknownHints = protocol.ToolHints{Destructive: true, OpenWorld: true}

// floor is the conservative floor of a workflow's annotations over the
// steps it may take: read only and idempotent only if every step is,
// destructive and open world if any step is. A workflow of no call is
// read only.
func (h *hintCache) floor(ctx context.Context, d protocol.Deployment, p workflow.Plan) *mcp.ToolAnnotations {
	all := protocol.ToolHints{ReadOnly: true, Idempotent: true}
	for _, n := range p.Nodes {
		var step protocol.ToolHints
		switch n.Type {
		case workflow.NodeCall:
			step = h.of(ctx, concrete(d, n.Node))
		case workflow.NodeSubgraph:
			step = unknownHints
		default:
			continue // routing, joins, ends and interrupts touch nothing outside
		}
		all.ReadOnly = all.ReadOnly && step.ReadOnly
		all.Idempotent = all.Idempotent && step.Idempotent
		all.Destructive = all.Destructive || step.Destructive
		all.OpenWorld = all.OpenWorld || step.OpenWorld
	}
	destructive, openWorld := all.Destructive && !all.ReadOnly, all.OpenWorld
	return &mcp.ToolAnnotations{ReadOnlyHint: all.ReadOnly, IdempotentHint: all.Idempotent, DestructiveHint: &destructive, OpenWorldHint: &openWorld}
}

// of returns a capability's hints, unknownHints where it cannot be read.
func (h *hintCache) of(ctx context.Context, name string) protocol.ToolHints {
	if got, ok := h.known[name]; ok {
		if got == nil {
			return unknownHints
		}
		return *got
	}
	var c protocol.CapabilityDetail
	if err := h.backend.Call(ctx, protocol.MethodCapabilitiesInspect, protocol.InspectCapabilityParams{QualifiedName: name}, &c); err != nil || c.Annotations == nil {
		h.known[name] = nil
		return unknownHints
	}
	h.known[name] = c.Annotations
	return *c.Annotations
}

// concrete is the capability a plan's logical capability name calls
// under the deployment's bindings: "<logical source>.<tool>" becomes
// "<connection>.<tool>". A name no binding covers (a built-in) stays.
func concrete(d protocol.Deployment, name string) string {
	best, ok := bindingOf(d, name)
	if !ok {
		return name
	}
	return best.ConcreteSource + strings.TrimPrefix(name, best.LogicalSource)
}

// bindingOf is the deployment's binding of the logical source a plan's
// capability name starts with (the longest that fits); none for a
// built-in.
func bindingOf(d protocol.Deployment, name string) (protocol.Binding, bool) {
	best := protocol.Binding{}
	for _, b := range d.Bindings {
		if strings.HasPrefix(name, b.LogicalSource+".") && len(b.LogicalSource) > len(best.LogicalSource) {
			best = b
		}
	}
	return best, best.LogicalSource != ""
}
