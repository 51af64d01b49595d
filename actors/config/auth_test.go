package config_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
)

func TestASourcesOAuthIsParsedAndChecked(t *testing.T) {
	is := is.New(t)
	f, err := config.Parse([]byte(`{"version":1,"server":{"sources":[{"kind":"mcp","id":"linear.default",
		"transport":{"kind":"http","url":"https://mcp.example.com/mcp"},
		"auth":{"kind":"oauth","client_id":"mcpflow","scopes":["read"],"redirect_port":8976}}]}}`))
	is.NoErr(err)
	c := f.Connections()[0]
	is.True(c.IsOAuth())
	is.Equal(*c.Auth, config.SourceAuth{Kind: "oauth", ClientID: "mcpflow", Scopes: []string{"read"}, RedirectPort: 8976})

	for _, tc := range []struct {
		auth, transport, want string
	}{
		{`{"kind":"basic"}`, `{"kind":"http","url":"https://x.example/mcp"}`, `kind must be "oauth"`},
		{`{"kind":"oauth"}`, `{"kind":"stdio","command":"server"}`, "needs an http or sse transport"},
		{`{"kind":"oauth","redirect_port":70000}`, `{"kind":"http","url":"https://x.example/mcp"}`, "is not a port"},
		{`{"kind":"oauth","scopes":[""]}`, `{"kind":"http","url":"https://x.example/mcp"}`, "empty scope"},
	} {
		_, err := config.Parse([]byte(`{"version":1,"server":{"sources":[{"kind":"mcp","id":"a.b","transport":` + tc.transport + `,"auth":` + tc.auth + `}]}}`))
		is.True(err != nil)
		is.True(strings.Contains(err.Error(), tc.want)) // names what is wrong
	}
}
