package sources_test

import (
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
