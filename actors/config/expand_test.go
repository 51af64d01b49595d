package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
)

// withReferences uses ${VAR} in every kind of string value.
const withReferences = `{"version":1,"server":{
  "store":{"root":"${MCPFLOW_T_ROOT:-/var/lib/mcpflow}"},
  "sources":[
    {"kind":"mcp","id":"local.default","metadata":{"note":"${NOT_EXPANDED}"},
     "transport":{"kind":"stdio","command":"${MCPFLOW_T_BIN}/server","args":["--key=${MCPFLOW_T_SECRET}","$${LITERAL}","cost: $5"],
                  "env":{"API_KEY":"${MCPFLOW_T_SECRET}","EMPTY":"${MCPFLOW_T_EMPTY}"}}},
    {"kind":"mcp","id":"remote.default",
     "transport":{"kind":"http","url":"https://${MCPFLOW_T_HOST}/mcp","headers":{"Authorization":"Bearer ${MCPFLOW_T_SECRET}"}}}
  ],
  "access":{"tokens":[{"name":"ci","token":"${MCPFLOW_T_TOKEN}","scopes":["run"]}]}
}}`

func TestReferencesExpandFromTheEnvironment(t *testing.T) {
	is := is.New(t)
	t.Setenv("MCPFLOW_T_BIN", "/opt/tools")
	t.Setenv("MCPFLOW_T_SECRET", "s3cr3t-value-0001")
	t.Setenv("MCPFLOW_T_EMPTY", "")
	t.Setenv("MCPFLOW_T_HOST", "mcp.example.test")
	t.Setenv("MCPFLOW_T_TOKEN", "token-0123456789abcdef")
	f, err := config.Parse([]byte(withReferences))
	is.NoErr(err)
	is.Equal(f.StoreRoot(), "/var/lib/mcpflow") // the default of an unset variable

	conns := f.Connections()
	local, remote := conns[0].Transport, conns[1].Transport
	is.Equal(local.Command, "/opt/tools/server")
	is.Equal(local.Args, []string{"--key=s3cr3t-value-0001", "${LITERAL}", "cost: $5"}) // $${ is a literal ${, a lone $ stays
	is.Equal(local.Env, map[string]string{"API_KEY": "s3cr3t-value-0001", "EMPTY": ""})
	is.Equal(conns[0].Metadata["note"], "${NOT_EXPANDED}") // metadata is shown as written
	is.Equal(remote.URL, "https://mcp.example.test/mcp")
	is.Equal(remote.Headers["Authorization"], "Bearer s3cr3t-value-0001")
	is.Equal(f.Server.Access.Tokens[0].Token, "token-0123456789abcdef")

	written := local.AsWritten()
	is.Equal(written.Args[0], "--key=${MCPFLOW_T_SECRET}") // the transport as written, to show
	is.Equal(written.Env["API_KEY"], "${MCPFLOW_T_SECRET}")
	is.Equal(remote.AsWritten().URL, "https://${MCPFLOW_T_HOST}/mcp")
	plain, err := config.Parse([]byte(valid))
	is.NoErr(err)
	is.Equal(plain.Connections()[0].Transport.AsWritten(), plain.Connections()[0].Transport) // no reference: itself
}

func TestAnUnsetVariableIsNamedNeverItsNeighboursValues(t *testing.T) {
	is := is.New(t)
	t.Setenv("MCPFLOW_T_SECRET", "s3cr3t-value-0001")
	t.Setenv("MCPFLOW_T_EMPTY", "")
	_, err := config.Parse([]byte(withReferences))
	is.True(err != nil)
	unset, ok := errors.AsType[*config.UnsetVariablesError](err)
	is.True(ok)
	is.Equal(unset.Names, []string{"MCPFLOW_T_BIN", "MCPFLOW_T_HOST", "MCPFLOW_T_TOKEN"})
	is.Equal(unset.Where["MCPFLOW_T_HOST"], []string{"server.sources[remote.default].transport.url"})
	is.Equal(unset.Where["MCPFLOW_T_TOKEN"], []string{"server.access.tokens[0].token"})
	is.True(strings.Contains(err.Error(), "MCPFLOW_T_BIN, MCPFLOW_T_HOST, MCPFLOW_T_TOKEN are not set"))
	is.True(!strings.Contains(err.Error(), "s3cr3t-value-0001")) // no value in the error
}

func TestMalformedReferencesAreErrors(t *testing.T) {
	for doc, want := range map[string]string{
		withSource(`{"kind":"mcp","id":"a.b","transport":{"kind":"stdio","command":"${OPEN"}}`):       "server.sources[a.b].transport.command: a ${ without its closing }",
		withSource(`{"kind":"mcp","id":"a.b","transport":{"kind":"stdio","command":"${input:key}"}}`): "${input:key} does not name an environment variable",
		withSource(`{"kind":"mcp","id":"a.b","transport":{"kind":"stdio","command":"${9LIVES}"}}`):    "${9LIVES} does not name",
	} {
		t.Run(want, func(t *testing.T) {
			is := is.New(t)
			_, err := config.Parse([]byte(doc))
			is.True(err != nil)
			is.True(strings.Contains(err.Error(), want))
		})
	}
}

func TestValidationErrorsShowReferencesNotValues(t *testing.T) {
	is := is.New(t)
	t.Setenv("MCPFLOW_T_VERSION", "secret-version-0042")
	t.Setenv("MCPFLOW_T_ACCOUNT", "hidden-account\"quoted")
	_, err := config.Parse([]byte(`{"version":1,"server":{"sources":[
		{"kind":"mcp","id":"a.${MCPFLOW_T_ACCOUNT}","transport":{"kind":"stdio","command":"x"}},
		{"kind":"mcp","id":"b.c","transport":{"kind":"stdio","command":"x","protocol_version":"${MCPFLOW_T_VERSION}"}}]}}`))
	is.True(err != nil)
	t.Log(err)
	is.True(strings.Contains(err.Error(), `protocol_version "${MCPFLOW_T_VERSION}" is not one of`)) // the reference stands in for the value
	is.True(strings.Contains(err.Error(), `a.${MCPFLOW_T_ACCOUNT}`))                                // also where %q escaped it
	is.True(!strings.Contains(err.Error(), "secret-version-0042"))
	is.True(!strings.Contains(err.Error(), "hidden-account"))
}

func TestARelativeStoreRootIsUnderTheConfigFolder(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	write := func(root string) *config.File {
		path := filepath.Join(dir, "mcpflow.json")
		is.NoErr(os.WriteFile(path, []byte(`{"version":1,"server":{"store":{"root":"`+root+`"}}}`), 0o600))
		f, err := config.Load(path)
		is.NoErr(err)
		return f
	}
	is.Equal(write("data/store").StoreRoot(), filepath.Join(dir, "data", "store")) // relative: under the file's folder
	is.Equal(write("/srv/mcpflow").StoreRoot(), "/srv/mcpflow")                    // absolute: as written
	is.Equal(write("").StoreRoot(), config.DefaultStoreRoot)                       // none: ./.mcpflow, as without --config

	t.Chdir(dir)
	is.NoErr(os.WriteFile("rel.json", []byte(`{"version":1,"server":{"store":{"root":"here"}}}`), 0o600))
	f, err := config.Load("rel.json") // a relative config path
	is.NoErr(err)
	is.Equal(f.StoreRoot(), filepath.Join(dir, "here"))
	is.True(filepath.IsAbs(f.Dir()))

	parsed, err := config.Parse([]byte(`{"version":1,"server":{"store":{"root":"rel"}}}`))
	is.NoErr(err)
	is.Equal(parsed.StoreRoot(), "rel") // parsed from memory: the working directory
}
