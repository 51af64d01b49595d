package mcpface

import (
	"context"
	"slices"

	"github.com/mcpflow/mcpflow/actors/config"
)

// The connections the face exposes (gateway mode): server.mcp.expose's
// entries, and the sources' own expose blocks, which a source registry
// apply may add, change or remove while the face runs. Each refresh reads
// them again (Options.Exposures) before the tools, resources and prompts
// they offer; without Options.Exposures they are the config's, fixed.

// exposuresNow reads the exposures again, as a refresh begins, and keeps
// them; a read that fails keeps the last ones (logged).
func (f *Face) exposuresNow(ctx context.Context) []config.MCPExpose {
	if f.exposuresOf == nil {
		return f.cfg.Expose
	}
	found, err := f.exposuresOf(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		f.log.Warn("mcp face: the exposed connections are not read again", "err", err)
		return f.exposed
	}
	f.exposed = found
	return found
}

// exposesPrompts reports whether an exposure offers prompts.
func exposesPrompts(exposed []config.MCPExpose) bool {
	return slices.ContainsFunc(exposed, func(e config.MCPExpose) bool { return e.Prompts })
}

// exposesResources reports whether an exposure offers resources.
func exposesResources(exposed []config.MCPExpose) bool {
	return slices.ContainsFunc(exposed, func(e config.MCPExpose) bool { return e.Resources })
}

// mayOfferPrompts and mayOfferResources say whether a new server declares
// the prompts and resources capabilities: where an exposure offers them
// now, and always where the exposures may change (a session's
// capabilities are fixed at its initialize; its lists are empty until a
// connection is exposed with them).
func (f *Face) mayOfferPrompts() bool {
	return f.exposuresOf != nil || exposesPrompts(f.cfg.Expose)
}

func (f *Face) mayOfferResources() bool {
	return f.exposuresOf != nil || exposesResources(f.cfg.Expose)
}
