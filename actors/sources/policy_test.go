package sources_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/sources"
	"github.com/mcpflow/mcpflow/actors/workflow/std"
)

// A platform source is enabled, unbound and safe for a workflow, and only
// wf.source calls upstream; a connection is enabled as configured, bound
// before use and calls upstream, and its description says whether it has
// a catalog yet.
func TestPolicyOfPlatformSourcesAndConnections(t *testing.T) {
	off := stdio("c.off", "")
	disabled := false
	off.Enabled = &disabled
	on := stdio("c.on", "")
	for _, tc := range []struct {
		name string
		src  sources.Source
		want sources.Policy
	}{
		{"wf.std", sources.Source{ID: std.StdSource}, sources.Policy{Kind: sources.KindSystem, Enabled: true, Platform: true, SafeForWorkflow: true,
			Description: "Workflow standard-library node specs and reducers."}},
		{"wf.recipes", sources.Source{ID: std.RecipesSource}, sources.Policy{Kind: sources.KindSystem, Enabled: true, Platform: true, SafeForWorkflow: true,
			Description: "First-party recipes composed from standard node specs."}},
		{"wf.source", sources.Source{ID: "wf.source"}, sources.Policy{Kind: sources.KindSystem, Enabled: true, Platform: true, SafeForWorkflow: true,
			CallsUpstream: true, Description: "Platform helpers that read resources of bound sources."}},
		{"no catalog", sources.Source{ID: on.ID, Conn: &on}, sources.Policy{Kind: sources.KindConnection, Enabled: true, BindingRequired: true,
			CallsUpstream: true, Description: "MCP connection c.on; no catalog yet."}},
		{"catalog, disabled", sources.Source{ID: off.ID, Conn: &off, Catalog: &catalog.Snapshot{ConnectionID: off.ID}}, sources.Policy{
			Kind: sources.KindConnection, BindingRequired: true, CallsUpstream: true,
			Description: "MCP connection c.off; tools, resources and prompts from its catalog."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is.New(t).Equal(tc.src.Policy(), tc.want)
		})
	}
}
