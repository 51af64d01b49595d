package sources

import (
	"sort"
	"strings"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// Capabilities is what workflows can use now: the platform built-ins and
// the catalogued tools of the enabled effective connections, read from
// the live catalogs and the live view of the effective connections.
type Capabilities struct {
	Catalogs    *catalog.Registry
	Connections *config.View // nil has no connections
}

// Find finds one capability by its qualified name through the registry's
// indexes, without listing the others: its cost does not grow with the
// number of connections or tools.
func (c Capabilities) Find(name string) (catalog.Capability, bool) {
	if b, ok := workflow.BuiltinCapability(name); ok {
		return b, true
	}
	return c.Catalogs.Find(name, c.Connections.Enabled)
}

// Matching lists the capabilities of sourceID (every source when it is
// empty) whose name or description holds query, ignoring case (every
// one when it is empty), sorted by name.
func (c Capabilities) Matching(sourceID, query string) []catalog.Capability {
	all := append(workflow.Builtins(), c.Catalogs.Capabilities(c.Connections.Enabled)...)
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	query = strings.ToLower(query)
	out := all[:0]
	for _, capability := range all {
		if sourceID != "" && capability.SourceID != sourceID {
			continue
		}
		if query != "" && !strings.Contains(strings.ToLower(capability.Name+" "+capability.Description), query) {
			continue
		}
		out = append(out, capability)
	}
	return out
}

// IsSource reports whether id names a source: a platform source or an
// effective connection, enabled or not.
func (c Capabilities) IsSource(id string) bool {
	if _, ok := c.Connections.Get(id); ok {
		return true
	}
	for _, b := range workflow.Builtins() {
		if b.SourceID == id {
			return true
		}
	}
	return false
}
