package sources

import (
	"fmt"

	"github.com/mcpflow/mcpflow/actors/workflow/std"
)

// Source kinds.
const (
	KindSystem     = "system"
	KindConnection = "connection"
)

// platformSource is the built-in source whose helpers read the resources
// of bound sources (wf.source.read_resource), and so call upstream.
const platformSource = "wf.source"

// platformDescriptions describe the built-in sources.
var platformDescriptions = map[string]string{
	std.StdSource:     "Workflow standard-library node specs and reducers.",
	std.RecipesSource: "First-party recipes composed from standard node specs.",
	platformSource:    "Platform helpers that read resources of bound sources.",
}

// Policy is what a source is and what using it does: its kind, whether it
// is enabled, whether a step may use it without a binding (a platform
// source, safe for a workflow) or must bind it (a connection), whether its
// calls reach an upstream server, and how it is described.
type Policy struct {
	Kind            string // KindSystem or KindConnection
	Enabled         bool
	Platform        bool
	SafeForWorkflow bool
	BindingRequired bool
	CallsUpstream   bool
	Description     string
}

// Policy is the source's policy. A platform source is always enabled and
// calls upstream only if it is wf.source; a connection is enabled as its
// config says, is bound before use and calls upstream, and its
// description says whether it has a catalog yet.
func (s Source) Policy() Policy {
	if c := s.Conn; c != nil {
		description := fmt.Sprintf("MCP connection %s; no catalog yet.", c.ID)
		if s.Catalog != nil {
			description = fmt.Sprintf("MCP connection %s; tools, resources and prompts from its catalog.", c.ID)
		}
		return Policy{Kind: KindConnection, Enabled: c.IsEnabled(), BindingRequired: true, CallsUpstream: true, Description: description}
	}
	return Policy{
		Kind: KindSystem, Enabled: true, Platform: true, SafeForWorkflow: true,
		CallsUpstream: s.ID == platformSource, Description: platformDescriptions[s.ID],
	}
}
