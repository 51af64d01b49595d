package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
)

const valid = `{
  "version": 1,
  "server": {
    "store": {"kind": "sqlite", "root": "/data/mcpflow"},
    "sources": [
      {"kind": "mcp", "id": "zeta.work", "enabled": false,
       "transport": {"kind": "http", "url": "https://mcp.example.test/mcp", "headers": {"Authorization": "Bearer x"}}},
      {"kind": "mcp", "id": "fixture.default", "provider": "fixture-provider", "account": "main-account",
       "transport": {"kind": "stdio", "command": "fixture-server", "args": ["--stdio"], "env": {"TOKEN": "t"}, "cwd": "/tmp"},
       "metadata": {"team": "a"}},
      {"kind": "mcp", "id": "alpha.one", "transport": {"kind": "stdio", "command": "alpha"}}
    ]
  }
}`

// withSource is a config file with one source (a JSON object).
func withSource(source string) string {
	return `{"version":1,"server":{"sources":[` + source + `]}}`
}

func TestParseAcceptsAValidFile(t *testing.T) {
	is := is.New(t)
	f, err := config.Parse([]byte(valid))
	is.NoErr(err) // a valid file parses
	is.Equal(f.Version, 1)
	is.Equal(f.StoreRoot(), "/data/mcpflow")
	is.Equal(f.Server.Store.Kind, "sqlite")
	is.Equal(len(f.Server.Sources), 3)

	conns := f.Connections()
	ids := []string{}
	for _, c := range conns {
		ids = append(ids, c.ID)
	}
	is.Equal(ids, []string{"alpha.one", "fixture.default", "zeta.work"}) // connections are sorted by id
	is.Equal(f.Server.Sources[0].ID, "zeta.work")                        // without reordering the file's sources

	fixture := conns[1]
	is.Equal(fixture.Transport.Kind, config.TransportStdio)
	is.Equal(fixture.Transport.Args, []string{"--stdio"})
	is.Equal(fixture.Transport.Env, map[string]string{"TOKEN": "t"})
	is.Equal(fixture.Transport.Cwd, "/tmp")
	is.Equal(fixture.Metadata["team"], "a")
	is.True(fixture.IsEnabled())   // enabled by default
	is.True(!conns[2].IsEnabled()) // unless disabled
	is.Equal(conns[2].Transport.Headers["Authorization"], "Bearer x")
}

func TestServerAndAccountNameComeFromTheIDUnlessGiven(t *testing.T) {
	is := is.New(t)
	f, err := config.Parse([]byte(valid))
	is.NoErr(err)
	conns := f.Connections()
	is.Equal(conns[0].Server(), "alpha")             // the provider part of the id
	is.Equal(conns[0].AccountName(), "one")          // the account part
	is.Equal(conns[1].Server(), "fixture-provider")  // an explicit provider wins
	is.Equal(conns[1].AccountName(), "main-account") // an explicit account wins
	dotted := config.Connection{ID: "svc.team.prod"}
	is.Equal(dotted.Server(), "svc")            // the provider ends at the first dot
	is.Equal(dotted.AccountName(), "team.prod") // the account is the rest
}

func TestStoreRootDefaultsWhenTheFileNamesNone(t *testing.T) {
	is := is.New(t)
	f, err := config.Parse([]byte(`{"version":1,"server":{}}`))
	is.NoErr(err) // a file without sources is valid
	is.Equal(f.StoreRoot(), config.DefaultStoreRoot)
	is.Equal(len(f.Connections()), 0)
}

func TestParseRejectsUnknownKeys(t *testing.T) {
	is := is.New(t)
	for _, doc := range []string{
		`{"version":1,"server":{},"extra":true}`,
		`{"version":1,"server":{"store":{"path":"x"}}}`,
		withSource(`{"kind":"mcp","id":"a.b","transport":{"kind":"stdio","command":"x","shell":true}}`),
		withSource(`{"kind":"mcp","id":"a.b","name":"x","transport":{"kind":"stdio","command":"x"}}`),
	} {
		_, err := config.Parse([]byte(doc))
		is.True(err != nil) // unknown keys are errors
		is.True(strings.Contains(err.Error(), "unknown field"))
	}
}

func TestParseRejectsAnyVersionButOne(t *testing.T) {
	is := is.New(t)
	for _, doc := range []string{`{"version":2,"server":{}}`, `{"version":0,"server":{}}`, `{"server":{}}`} {
		_, err := config.Parse([]byte(doc))
		is.True(err != nil) // only version 1 is understood
		is.True(strings.Contains(err.Error(), "version"))
	}
}

func TestParseRejectsBadConnectionIDs(t *testing.T) {
	is := is.New(t)
	for _, tc := range []struct{ id, want string }{
		{"nodot", "<provider>.<account>"},
		{"trailing.", "<provider>.<account>"},
		{".leading", "must match"},
		{"wf.std", "reserved"},
		{"wf.admin", "reserved"},
		{"has space.x", "must match"},
		{"slash/x.y", "must match"},
		{"ü.x", "must match"},
		{"", "must match"},
	} {
		_, err := config.Parse([]byte(withSource(`{"kind":"mcp","id":"` + tc.id + `","transport":{"kind":"stdio","command":"x"}}`)))
		is.True(err != nil) // a bad id is rejected
		if !strings.Contains(err.Error(), tc.want) {
			t.Logf("id %q: %v", tc.id, err)
			is.Fail() // the error says what is wrong with the id
		}
		is.True(config.ValidateID(tc.id) != nil) // and ValidateID agrees
	}
	is.NoErr(config.ValidateID("wf.custom")) // only the listed wf ids are reserved
	is.NoErr(config.ValidateID("a_b-c.d.e"))
}

func TestParseRejectsIncompleteTransports(t *testing.T) {
	is := is.New(t)
	for _, tc := range []struct{ transport, want string }{
		{`{"kind":"stdio"}`, "needs a command"},
		{`{"kind":"stdio","url":"https://x.test"}`, "needs a command"},
		{`{"kind":"http","url":"ftp://x.test/mcp"}`, "http(s) url"},
		{`{"kind":"http","url":"file:///etc/passwd"}`, "http(s) url"},
		{`{"kind":"http","url":"https://"}`, "http(s) url"},
		{`{"kind":"http","url":"not a url"}`, "http(s) url"},
		{`{"kind":"http"}`, "http(s) url"},
		{`{"kind":"websocket","url":"ws://x.test"}`, "stdio, http or sse"},
		{`{"kind":"sse","url":"ftp://x.test/sse"}`, "sse transport needs an http(s) url"},
	} {
		_, err := config.Parse([]byte(withSource(`{"kind":"mcp","id":"a.b","transport":` + tc.transport + `}`)))
		is.True(err != nil) // an incomplete transport is rejected
		if !strings.Contains(err.Error(), tc.want) {
			t.Logf("transport %s: %v", tc.transport, err)
			is.Fail() // the error says what the transport lacks
		}
	}
	_, err := config.Parse([]byte(withSource(`{"kind":"mcp","id":"a.b","transport":{"kind":"http","url":"http://localhost:8080/mcp"}}`)))
	is.NoErr(err) // plain http is allowed
	_, err = config.Parse([]byte(withSource(`{"kind":"tool","id":"a.b","transport":{"kind":"stdio","command":"x"}}`)))
	is.True(err != nil) // a source kind other than mcp
}

func TestParseRejectsDuplicateIDs(t *testing.T) {
	is := is.New(t)
	src := `{"kind":"mcp","id":"a.b","transport":{"kind":"stdio","command":"x"}}`
	_, err := config.Parse([]byte(`{"version":1,"server":{"sources":[` + src + `,` + src + `]}}`))
	is.True(err != nil) // one id, two sources
	is.True(strings.Contains(err.Error(), "configured twice"))
}

func TestParseReportsEveryBadSource(t *testing.T) {
	is := is.New(t)
	_, err := config.Parse([]byte(`{"version":1,"server":{"sources":[
		{"kind":"mcp","id":"nodot","transport":{"kind":"stdio","command":"x"}},
		{"kind":"mcp","id":"a.b","transport":{"kind":"stdio"}}]}}`))
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "nodot"))           // the first bad source
	is.True(strings.Contains(err.Error(), "needs a command")) // and the second
}

func TestLoadReadsAndNamesTheFile(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	is.NoErr(os.WriteFile(good, []byte(valid), 0o600))
	f, err := config.Load(good)
	is.NoErr(err) // a valid file loads
	is.Equal(len(f.Connections()), 3)

	bad := filepath.Join(dir, "bad.json")
	is.NoErr(os.WriteFile(bad, []byte(`{"version":7}`), 0o600))
	_, err = config.Load(bad)
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), bad)) // the error names the file

	_, err = config.Load(filepath.Join(dir, "missing.json"))
	is.True(err != nil) // a missing file
}

func TestASourceMayAskForAProtocolVersion(t *testing.T) {
	is := is.New(t)
	f, err := config.Parse([]byte(withSource(`{"kind":"mcp","id":"a.b","transport":{"kind":"stdio","command":"x","protocol_version":"2026-07-28"}}`)))
	is.NoErr(err)
	is.Equal(f.Connections()[0].Transport.ProtocolVersion, "2026-07-28")
	_, err = config.Parse([]byte(withSource(`{"kind":"mcp","id":"a.b","transport":{"kind":"stdio","command":"x","protocol_version":"1999-01-01"}}`)))
	is.True(err != nil) // an unknown version is refused
	is.True(strings.Contains(err.Error(), "1999-01-01"))
}

func TestASourceMayBoundItsAnswersButNotBelowZero(t *testing.T) {
	is := is.New(t)
	f, err := config.Parse([]byte(withSource(`{"kind":"mcp","id":"a.b","max_result_bytes":1048576,"transport":{"kind":"stdio","command":"x"}}`)))
	is.NoErr(err)
	is.Equal(f.Connections()[0].MaxResultBytes, int64(1<<20))
	_, err = config.Parse([]byte(withSource(`{"kind":"mcp","id":"a.b","max_result_bytes":-1,"transport":{"kind":"stdio","command":"x"}}`)))
	is.True(err != nil) // a negative bound is refused
	is.Equal(err.Error(), `invalid config: source "a.b": max_result_bytes must not be negative (0 or absent keeps server.limits.max_result_bytes)`)
}
