package mcpface

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/mcpflow/mcpflow/actors/config"
)

// MaxToolName is the longest tool name the face gives: a host's prefix
// (Claude Code's "mcp__mcpflow__", 14 characters) still fits the 64 that
// Claude accepts.
const MaxToolName = 48

// hashedPrefix is how much of a name is kept before a hash suffix.
const hashedPrefix = MaxToolName - 9

// toolName derives a deployment's tool name from its id: a trailing
// ".default" dropped, every character outside [A-Za-z0-9_-] made "_", and
// a name longer than MaxToolName cut and suffixed with a hash of the id.
func toolName(deploymentID string) string {
	name := config.ToolSafe(strings.TrimSuffix(deploymentID, ".default"))
	if name == "" {
		name = "workflow"
	}
	if len(name) > MaxToolName {
		return hashed(name, deploymentID)
	}
	return name
}

// hashed is name cut to hashedPrefix, then "_" and 8 hex digits of the
// FNV-1a hash of id.
func hashed(name, id string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return fmt.Sprintf("%s_%08x", name[:min(len(name), hashedPrefix)], h.Sum32())
}

// assignNames names each deployment's tool, deterministically: its own
// mcp.tool_name, or the name derived from its id. Where two deployments
// come to one name (or a derived name is one of the face's own tools),
// the deployment a custom name belongs to keeps it, then the smallest id;
// the others get the hashed form. The result depends only on the set of
// deployments, so it is the same after every restart.
func assignNames(ids []string, custom map[string]string, reserved func(string) bool) map[string]string {
	sorted := slices.Sorted(slices.Values(ids))
	names := make(map[string]string, len(sorted))
	taken := map[string]bool{}
	for _, id := range sorted { // custom names first: they were asked for
		if n := custom[id]; n != "" && !taken[n] && !reserved(n) {
			names[id], taken[n] = n, true
		}
	}
	for _, id := range sorted {
		if _, ok := names[id]; ok {
			continue
		}
		n := toolName(id)
		if taken[n] || reserved(n) {
			n = hashed(n, id)
		}
		names[id], taken[n] = n, true
	}
	return names
}
