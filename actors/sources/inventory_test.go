package sources_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/sources"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/std"
)

// The inventory lists the platform sources and every effective
// connection, sorted by id; a connection owns its catalog's tools as node
// specs, and its resources and prompts, and one with no catalog owns
// nothing yet.
func TestInventoryListsPlatformSourcesAndConnectionsWithWhatTheyOwn(t *testing.T) {
	is := is.New(t)
	reg := catalog.NewRegistry([]catalog.Snapshot{{ConnectionID: "b.one",
		Tools:     []catalog.Tool{tool("zeta", ""), tool("alpha", "")},
		Resources: []catalog.Resource{{URI: "file:///z"}, {URI: "file:///a", Name: "named"}},
		Prompts:   []catalog.Prompt{{Name: "greet"}},
	}})
	all := sources.Inventory([]config.Connection{stdio("b.one", ""), stdio("a.none", "")}, reg)
	byID := map[string]sources.Source{}
	var ids []string
	for _, s := range all {
		ids = append(ids, s.ID)
		byID[s.ID] = s
	}
	is.Equal(ids, []string{"a.none", "b.one", std.RecipesSource, "wf.source", std.StdSource}) // sorted by id

	one := byID["b.one"]
	is.True(one.Conn != nil && one.Catalog != nil)
	is.Equal(len(one.NodeSpecs), 2)
	is.Equal(one.NodeSpecs[0].Name, "b.one.alpha") // sorted by name
	is.True(one.NodeSpecs[0].Async)                // a connection's capability is a call
	is.Equal(one.Resources, []string{"b.one.file:///z", "b.one.named"})
	is.Equal(one.Prompts, []string{"b.one.greet"})

	none := byID["a.none"]
	is.True(none.Conn != nil && none.Catalog == nil) // no catalog yet
	is.Equal(len(none.NodeSpecs), 0)

	platform := byID["wf.source"]
	is.True(platform.Conn == nil) // a platform source has no connection
	var read *sources.NodeSpec
	for i := range platform.NodeSpecs {
		if platform.NodeSpecs[i].Name == workflow.ReadResource {
			read = &platform.NodeSpecs[i]
		}
	}
	is.True(read != nil && read.AcceptsContext)        // read_resource gets the run's context
	is.True(len(byID[std.StdSource].Reducers) > 0)     // wf.std owns the reducers
	is.Equal(len(byID[std.RecipesSource].Reducers), 0) // and no other source does
}

// What workflows can use is the platform built-ins and the tools of the
// enabled connections: a disabled connection is still a source, but its
// tools are not found or listed; a listing filters by source and by a
// query on name and description, ignoring case, sorted by name.
func TestCapabilitiesAreTheBuiltinsAndTheToolsOfEnabledConnections(t *testing.T) {
	is := is.New(t)
	off := stdio("c.off", "")
	disabled := false
	off.Enabled = &disabled
	reg := catalog.NewRegistry([]catalog.Snapshot{
		{ConnectionID: "c.on", Tools: []catalog.Tool{tool("zeta", "Reads the WEATHER"), tool("alpha", "")}},
		{ConnectionID: "c.off", Tools: []catalog.Tool{tool("hidden", "weather too")}},
	})
	caps := sources.Capabilities{Catalogs: reg, Connections: config.NewView([]config.Connection{stdio("c.on", ""), off})}

	_, ok := caps.Find("c.on.zeta")
	is.True(ok)
	_, ok = caps.Find("c.off.hidden")
	is.True(!ok) // its connection is disabled
	_, ok = caps.Find(workflow.ReadResource)
	is.True(ok) // a built-in

	is.True(caps.IsSource("c.off")) // disabled, still a source
	is.True(caps.IsSource(std.StdSource))
	is.True(!caps.IsSource("c.none"))

	names := func(cs []catalog.Capability) []string {
		out := []string{}
		for _, c := range cs {
			out = append(out, c.Name)
		}
		return out
	}
	is.Equal(names(caps.Matching("c.on", "")), []string{"c.on.alpha", "c.on.zeta"}) // sorted by name
	is.Equal(names(caps.Matching("", "weather")), []string{"c.on.zeta"})            // the description, any case; not the disabled one
	is.Equal(names(caps.Matching("c.off", "")), []string{})                         // a disabled connection lists nothing
	all := caps.Matching("", "")
	is.Equal(len(all), len(workflow.Builtins())+2)
	is.True(slices.IsSortedFunc(all, func(a, b catalog.Capability) int { return strings.Compare(a.Name, b.Name) }))
	is.Equal(len(sources.Capabilities{Catalogs: reg}.Matching("c.on", "")), 0) // no view, no connections
}
