package sources

import (
	"sort"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/std"
)

// Source is one capability source: a platform source (wf.std,
// wf.recipes, wf.source) or an effective connection, with what it owns.
type Source struct {
	ID string
	// Conn is the connection; nil for a platform source.
	Conn *config.Connection
	// Catalog is the connection's last catalog; nil when it has none yet,
	// and for a platform source.
	Catalog *catalog.Snapshot
	// NodeSpecs are the capabilities it owns, sorted by name.
	NodeSpecs []NodeSpec
	// Reducers are the reducers it owns (wf.std's), sorted by name.
	Reducers []std.Reducer
	// Resources and Prompts are the "<connection>.<name>" names of its
	// catalog's resources (named, else by URI) and prompts, sorted.
	Resources, Prompts []string
}

// NodeSpec is a capability a source owns and how a step runs it.
type NodeSpec struct {
	catalog.Capability
	// Async says a step waits on a call for it: every capability of a
	// connection, and the platform's that are not computed in place.
	Async bool
	// AcceptsContext says a step gets the run's context with it
	// (wf.source.read_resource).
	AcceptsContext bool
}

// Inventory lists every source sorted by id: the platform sources, and
// each of conns (the effective connections), enabled or not. A connection
// owns the tools of its last catalog in catalogs as node specs (it
// proxies no tools to MCP clients), and its resources and prompts.
func Inventory(conns []config.Connection, catalogs *catalog.Registry) []Source {
	byID := map[string]*Source{}
	for _, c := range workflow.Builtins() {
		src, ok := byID[c.SourceID]
		if !ok {
			src = &Source{ID: c.SourceID}
			byID[c.SourceID] = src
		}
		src.NodeSpecs = append(src.NodeSpecs, NodeSpec{Capability: c, Async: !c.Platform, AcceptsContext: c.Name == workflow.ReadResource})
	}
	if src, ok := byID[std.StdSource]; ok {
		src.Reducers = std.Reducers()
	}
	for i := range conns {
		c := conns[i]
		src := &Source{ID: c.ID, Conn: &c}
		if snap, ok := catalogs.Get(c.ID); ok {
			src.Catalog = &snap
			for _, capability := range snap.Capabilities() {
				src.NodeSpecs = append(src.NodeSpecs, NodeSpec{Capability: capability, Async: true})
			}
			for _, r := range snap.Resources {
				name := r.Name
				if name == "" {
					name = r.URI
				}
				src.Resources = append(src.Resources, c.ID+"."+name)
			}
			for _, p := range snap.Prompts {
				src.Prompts = append(src.Prompts, c.ID+"."+p.Name)
			}
		}
		byID[c.ID] = src
	}
	out := make([]Source, 0, len(byID))
	for _, src := range byID {
		sort.Slice(src.NodeSpecs, func(i, j int) bool { return src.NodeSpecs[i].Name < src.NodeSpecs[j].Name })
		sort.Slice(src.Reducers, func(i, j int) bool { return src.Reducers[i].Name < src.Reducers[j].Name })
		sort.Strings(src.Resources)
		sort.Strings(src.Prompts)
		out = append(out, *src)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
