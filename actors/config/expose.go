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

// Exposures are the connections exposed through the MCP face: the
// entries of server.mcp.expose (m), then the expose blocks of conns (the
// effective sources: the config file's and the registry's) that
// server.mcp.expose does not name, each with its source's id, in the
// order of conns.
func Exposures(m *MCP, conns []Connection) []MCPExpose {
	var out []MCPExpose
	if m != nil {
		out = append(out, m.Expose...)
	}
	for _, c := range conns {
		if c.Expose == nil || slices.ContainsFunc(out, func(e MCPExpose) bool { return e.Connection == c.ID }) {
			continue
		}
		e := *c.Expose
		e.Connection = c.ID
		out = append(out, e)
	}
	return out
}

// ExposedIn is the exposure of connection id in exposures, if any.
func ExposedIn(exposures []MCPExpose, id string) (MCPExpose, bool) {
	for _, e := range exposures {
		if e.Connection == id {
			return e, true
		}
	}
	return MCPExpose{}, false
}

// ValidateExposures checks server.mcp.expose (m) against the sources
// conns: each entry names a source, once, and no source also has an
// expose block of its own; and every exposure, an entry's or a source's,
// has a prefix of its own that fits hosts' names, valid patterns and a
// known scope.
func ValidateExposures(m *MCP, conns []Connection) error {
	var errs []error
	ids := make([]string, len(conns))
	own := map[string]bool{}
	for i, c := range conns {
		ids[i] = c.ID
		own[c.ID] = c.Expose != nil
	}
	connections := map[string]int{}
	var entries []MCPExpose
	if m != nil {
		entries = m.Expose
	}
	for i, e := range entries {
		at := fmt.Sprintf("server.mcp.expose[%d]", i)
		bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(at+format, args...)) }
		switch {
		case e.Connection == "":
			bad(".connection is required: the id of a source in server.sources")
		case !slices.Contains(ids, e.Connection):
			bad(".connection: no source %q in server.sources%s", e.Connection, suggest.DidYouMean(e.Connection, ids))
		case own[e.Connection]:
			bad(".connection: source %q has an expose block of its own: keep one of the two", e.Connection)
		}
		if j, dup := connections[e.Connection]; dup && e.Connection != "" {
			bad(".connection: %q is exposed already by server.mcp.expose[%d]", e.Connection, j)
		}
		connections[e.Connection] = i
		e.check(bad)
	}
	prefixes := map[string]string{}
	for _, e := range Exposures(m, conns) {
		p := e.DefaultPrefix()
		if other, dup := prefixes[p]; dup && p != "" {
			errs = append(errs, fmt.Errorf("the exposed connections %q and %q both take the prefix %q: give each a prefix of its own", other, e.Connection, p))
		}
		prefixes[p] = e.Connection
	}
	return errors.Join(errs...)
}

// check reports, through bad, what is wrong with e itself: its prefix,
// its tool patterns, its scope.
func (e MCPExpose) check(bad func(format string, args ...any)) {
	if e.Prefix != "" && (!exposePrefix.MatchString(e.Prefix) || len(e.Prefix) > MaxExposePrefix) {
		bad(".prefix: %q must be 1 to %d of A-Z a-z 0-9 _ - and start with a letter or digit (tool names must fit hosts' limits)", e.Prefix, MaxExposePrefix)
	}
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
