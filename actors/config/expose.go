package config

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/mcpflow/mcpflow/actors/suggest"
)

// MCPExpose exposes one connection's upstream tools through the MCP face
// (gateway mode, server.mcp.expose; see docs/mcp.md): each allowed tool
// is offered as "<prefix>_<tool>" beside the deployments, and a call of it
// goes through the connection's supervised session as a one-step run.
type MCPExpose struct {
	// Connection is the id of a configured source.
	Connection string `json:"connection"`
	// Prefix starts the name of each tool offered; empty takes the
	// connection id with ".default" dropped (DefaultPrefix).
	Prefix string `json:"prefix,omitempty"`
	// Tools filters the upstream tools by name; nil offers every one.
	Tools *MCPToolFilter `json:"tools,omitempty"`
	// Resources offers the upstream's resources beside the tools, under
	// their own URIs, each read through the connection's shared session.
	Resources bool `json:"resources,omitempty"`
	// Prompts offers the upstream's prompts beside the tools, each
	// rendered through the connection's shared session.
	Prompts bool `json:"prompts,omitempty"`
	// Scope is whose upstream session a call uses: ExposeShared (the
	// default), the connection's one session, the one workflows use; or
	// ExposePerClient, a session of each downstream MCP client session
	// (of its token) of its own, closed when that one ends.
	Scope string `json:"scope,omitempty"`
	// Record, when false, leaves no record of a call once it has ended:
	// its run is kept while it runs and for a minute after, is not in the
	// admin event log, and is counted by the metrics only
	// (store.Retention.Transient). Nil or true records every call.
	Record *bool `json:"record,omitempty"`
}

// Records reports whether e's pass-through calls are recorded as runs.
func (e MCPExpose) Records() bool { return e.Record == nil || *e.Record }

// MCPToolFilter chooses the upstream tools offered: those whose name
// matches an Allow pattern (every tool when Allow is empty) and no Deny
// pattern. Patterns are path.Match globs ("browser_*").
type MCPToolFilter struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// Session scopes of an exposed connection.
const (
	ExposeShared    = "shared"
	ExposePerClient = "per_client"
)

// MaxExposePrefix is the longest prefix: it leaves a tool's own name at
// least 23 of the face's 48 characters (MaxToolName in api/mcpface).
const MaxExposePrefix = 24

// exposePrefix is what a prefix may hold: the characters every host takes
// in a tool name.
var exposePrefix = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// DefaultPrefix is the prefix of an exposed connection: its own, or the
// connection id with ".default" dropped, every character outside
// [A-Za-z0-9_-] made "_", cut to MaxExposePrefix.
func (e MCPExpose) DefaultPrefix() string {
	if e.Prefix != "" {
		return e.Prefix
	}
	p := ToolSafe(strings.TrimSuffix(e.Connection, ".default"))
	return p[:min(len(p), MaxExposePrefix)]
}

// ToolSafe is s with every character outside [A-Za-z0-9_-] made "_": a
// name every host takes in a tool's (the MCP face's tool names).
func ToolSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 && (r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Offers reports whether the tool named tool (its upstream name) is
// offered: allowed, and not denied.
func (e MCPExpose) Offers(tool string) bool {
	if e.Tools == nil {
		return true
	}
	if len(e.Tools.Allow) > 0 && !matchesAny(e.Tools.Allow, tool) {
		return false
	}
	return !matchesAny(e.Tools.Deny, tool)
}

func matchesAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// Exposed is the expose entry of connection id, if it is exposed.
func (m *MCP) Exposed(id string) (MCPExpose, bool) {
	if m == nil {
		return MCPExpose{}, false
	}
	for _, e := range m.Expose {
		if e.Connection == id {
			return e, true
		}
	}
	return MCPExpose{}, false
}

// validateExpose checks server.mcp.expose against the configured sources
// (their ids): each entry names a source once, under a prefix of its own
// that fits hosts' names, with valid patterns, and asks only for what is
// supported.
func (m *MCP) validateExpose(sources []string) error {
	if m == nil {
		return nil
	}
	var errs []error
	connections, prefixes := map[string]int{}, map[string]int{}
	for i, e := range m.Expose {
		at := fmt.Sprintf("server.mcp.expose[%d]", i)
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf(at+format, args...))
		}
		switch {
		case e.Connection == "":
			bad(".connection is required: the id of a source in server.sources")
		case !slices.Contains(sources, e.Connection):
			bad(".connection: no source %q in server.sources%s", e.Connection, suggest.DidYouMean(e.Connection, sources))
		}
		if j, dup := connections[e.Connection]; dup && e.Connection != "" {
			bad(".connection: %q is exposed already by server.mcp.expose[%d]", e.Connection, j)
		}
		connections[e.Connection] = i
		p := e.DefaultPrefix()
		if e.Prefix != "" && (!exposePrefix.MatchString(e.Prefix) || len(e.Prefix) > MaxExposePrefix) {
			bad(".prefix: %q must be 1 to %d of A-Z a-z 0-9 _ - and start with a letter or digit (tool names must fit hosts' limits)", e.Prefix, MaxExposePrefix)
		} else if j, dup := prefixes[p]; dup && p != "" {
			bad(".prefix: %q is server.mcp.expose[%d]'s already: give each exposed connection a prefix of its own", p, j)
		}
		prefixes[p] = i
		if e.Tools != nil {
			for list, patterns := range [][]string{e.Tools.Allow, e.Tools.Deny} {
				for j, p := range patterns {
					if _, err := path.Match(p, ""); err != nil || p == "" {
						bad(".tools.%s[%d]: %q is not a tool name or pattern", []string{"allow", "deny"}[list], j, p)
					}
				}
			}
		}
		switch e.Scope {
		case "", ExposeShared, ExposePerClient:
		default:
			bad(".scope must be %q or %q, got %q", ExposeShared, ExposePerClient, e.Scope)
		}
	}
	return errors.Join(errs...)
}
