package config

import (
	"strings"
	"testing"

	"github.com/matryer/is"
)

// exposeDoc is a config with two stdio sources and the given expose list.
func exposeDoc(expose string) []byte {
	return []byte(`{"version": 1, "server": {
  "sources": [
    {"id": "seqthink.default", "kind": "mcp", "transport": {"kind": "stdio", "command": "node"}},
    {"id": "everything.default", "kind": "mcp", "transport": {"kind": "stdio", "command": "node"}}
  ],
  "mcp": {"expose": ` + expose + `}}}`)
}

func TestExposedConnectionsParseWithTheirDefaults(t *testing.T) {
	is := is.New(t)
	f, err := Parse(exposeDoc(`[{"connection": "seqthink.default"},
	  {"connection": "everything.default", "prefix": "ev", "tools": {"allow": ["get-*", "echo"], "deny": ["get-env"]}, "scope": "shared", "record": true, "resources": true, "prompts": true}]`))
	is.NoErr(err)
	seq, ok := ExposedIn(Exposures(f.Server.MCP, f.Server.Sources), "seqthink.default")
	is.True(ok)
	is.Equal(seq.DefaultPrefix(), "seqthink") // ".default" dropped
	is.True(seq.Offers("sequentialthinking")) // no filter: every tool
	ev, ok := ExposedIn(Exposures(f.Server.MCP, f.Server.Sources), "everything.default")
	is.True(ok)
	is.Equal(ev.DefaultPrefix(), "ev")
	is.True(ev.Offers("get-tiny-image"))
	is.True(ev.Offers("echo"))
	is.True(!ev.Offers("get-env"))       // denied
	is.True(!ev.Offers("trigger-thing")) // not allowed
	is.True(ev.Resources && !seq.Resources)
	is.True(ev.Prompts && !seq.Prompts)
	_, ok = ExposedIn(Exposures(f.Server.MCP, f.Server.Sources), "other.default")
	is.True(!ok)
}

func TestExposingIsRefusedWithTheEntryAtFault(t *testing.T) {
	for _, tc := range []struct {
		name, expose, want string
	}{
		{"unknown connection", `[{"connection": "seqthinc.default"}]`, `server.mcp.expose[0].connection: no source "seqthinc.default" in server.sources; did you mean "seqthink.default"?`},
		{"no connection", `[{"prefix": "x"}]`, `server.mcp.expose[0].connection is required`},
		{"bad scope", `[{"connection": "seqthink.default", "scope": "mine"}]`, `server.mcp.expose[0].scope must be "shared" or "per_client", got "mine"`},
		{"bad prefix", `[{"connection": "seqthink.default", "prefix": "a.b"}]`, `server.mcp.expose[0].prefix: "a.b" must be 1 to 24`},
		{"long prefix", `[{"connection": "seqthink.default", "prefix": "` + strings.Repeat("p", 25) + `"}]`, `must be 1 to 24`},
		{"shared prefix", `[{"connection": "seqthink.default", "prefix": "x"}, {"connection": "everything.default", "prefix": "x"}]`, `the exposed connections "seqthink.default" and "everything.default" both take the prefix "x"`},
		{"twice", `[{"connection": "seqthink.default"}, {"connection": "seqthink.default", "prefix": "y"}]`, `server.mcp.expose[1].connection: "seqthink.default" is exposed already by server.mcp.expose[0]`},
		{"bad pattern", `[{"connection": "seqthink.default", "tools": {"deny": ["["]}}]`, `server.mcp.expose[0].tools.deny[0]: "[" is not a tool name or pattern`},
		{"unknown field", `[{"connection": "seqthink.default", "tool": {}}]`, `unknown field "tool"; did you mean "tools"?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, err := Parse(exposeDoc(tc.expose))
			is.True(err != nil)
			if !strings.Contains(err.Error(), tc.want) {
				t.Logf("error: %v", err)
			}
			is.True(strings.Contains(err.Error(), tc.want)) // the entry at fault, and why
		})
	}
}

func TestATokensMCPConnectionsArePatterns(t *testing.T) {
	is := is.New(t)
	err := (&Access{Tokens: []Token{{Name: "a", Token: strings.Repeat("t", 32), Scopes: []string{"run"}, MCPConnections: []string{"seq*", "["}}}}).Validate()
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), `mcp_connections[1]: "[" is not a connection id or pattern`))
}

// sourceExposeDoc is a config whose everything.default source carries
// block as its expose, beside server.mcp.expose entries.
func sourceExposeDoc(block, entries string) []byte {
	return []byte(`{"version": 1, "server": {"sources": [
    {"id": "seqthink.default", "kind": "mcp", "transport": {"kind": "stdio", "command": "node"}},
    {"id": "everything.default", "kind": "mcp", "transport": {"kind": "stdio", "command": "node"}, "expose": ` + block + `}
  ],
  "mcp": {"expose": ` + entries + `}}}`)
}

func TestASourceExposesItselfWithAnExposeBlock(t *testing.T) {
	is := is.New(t)
	f, err := Parse(sourceExposeDoc(`{"prefix": "ev", "prompts": true}`, `[{"connection": "seqthink.default"}]`))
	is.NoErr(err)
	exposed := Exposures(f.Server.MCP, f.Server.Sources)
	is.Equal(len(exposed), 2) // server.mcp.expose's entry, then the source's block
	ev, ok := ExposedIn(exposed, "everything.default")
	is.True(ok)
	is.Equal(ev.Connection, "everything.default") // its source's id
	is.Equal(ev.DefaultPrefix(), "ev")
	is.True(ev.Prompts)

	for _, tc := range []struct{ name, block, entries, want string }{
		{"both", `{}`, `[{"connection": "everything.default"}]`, `server.mcp.expose[0].connection: source "everything.default" has an expose block of its own`},
		{"another connection", `{"connection": "seqthink.default"}`, `[]`, `source "everything.default": expose.connection: "seqthink.default" is another source`},
		{"bad scope", `{"scope": "mine"}`, `[]`, `source "everything.default": expose.scope must be "shared" or "per_client", got "mine"`},
		{"one prefix", `{"prefix": "x"}`, `[{"connection": "seqthink.default", "prefix": "x"}]`, `both take the prefix "x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, err := Parse(sourceExposeDoc(tc.block, tc.entries))
			is.True(err != nil)
			if !strings.Contains(err.Error(), tc.want) {
				t.Logf("error: %v", err)
			}
			is.True(strings.Contains(err.Error(), tc.want))
		})
	}
}
