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

// sample reads testdata/import/name.
func sample(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "import", name))
	is.New(t).NoErr(err) // read the sample
	return data
}

// imported imports the sample name and returns it with its connections
// by id.
func imported(t *testing.T, name string) (*config.File, map[string]config.Connection) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	data := sample(t, name)
	is.True(config.IsForeign(data)) // detected by its top-level key
	f, err := config.Import(data)
	is.NoErr(err)
	byID := map[string]config.Connection{}
	for _, c := range f.Connections() {
		byID[c.ID] = c
	}
	return f, byID
}

// hasNote reports whether a note of r holds every part.
func hasNote(r *config.ImportReport, parts ...string) bool {
	for _, n := range r.Notes {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(n, p)
		}
		if all {
			return true
		}
	}
	return false
}

// noValueIn checks that no report line shows one of values.
func noValueIn(t *testing.T, r *config.ImportReport, values ...string) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	for _, n := range r.Notes {
		for _, v := range values {
			is.True(!strings.Contains(n, v)) // notes name fields, never values
		}
	}
}

func TestImportClaudeDesktop(t *testing.T) {
	is := is.New(t)
	f, byID := imported(t, "claude_desktop.json")
	r := f.Imported()
	is.Equal(r.Format, config.FormatMCPServers)
	is.Equal(len(byID), 3)
	is.Equal(r.Servers, []config.ImportedServer{
		{Name: "My Notes.app", ID: "My_Notes_app.default", Transport: "stdio", Enabled: true},
		{Name: "filesystem", ID: "filesystem.default", Transport: "stdio", Enabled: true},
		{Name: "github", ID: "github.default", Transport: "stdio", Enabled: true},
	})

	gh := byID["github.default"]
	is.Equal(gh.Kind, "mcp")
	is.Equal(gh.Transport, config.Transport{Kind: config.TransportStdio, Command: "npx",
		Args: []string{"-y", "@modelcontextprotocol/server-github"},
		Env:  map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}", "GITHUB_TOOLSETS": "repos,issues"}}) // references stay unexpanded
	is.Equal(byID["My_Notes_app.default"].Transport.Env["NOTES_API_KEY"], "literal-notes-key-0042") // values copied as written
	is.True(hasNote(r, `"My Notes.app"`, `"My_Notes_app.default"`))                                 // the rename is reported
	is.True(hasNote(r, `"globalShortcut"`, "ignored"))                                              // and what was skipped
	noValueIn(t, r, "literal-notes-key-0042", "repos,issues")

	// Served directly, the reference expands from the environment.
	t.Setenv("GITHUB_TOKEN", "ghp_expanded_secret_0001")
	parsed, err := config.Parse(sample(t, "claude_desktop.json"))
	is.NoErr(err)
	is.Equal(parsed.Imported().Servers, r.Servers)
	var ghParsed config.Connection
	for _, c := range parsed.Connections() {
		if c.ID == "github.default" {
			ghParsed = c
		}
	}
	is.Equal(ghParsed.Transport.Env["GITHUB_PERSONAL_ACCESS_TOKEN"], "ghp_expanded_secret_0001")
	is.Equal(ghParsed.Transport.AsWritten().Env["GITHUB_PERSONAL_ACCESS_TOKEN"], "${GITHUB_TOKEN}") // shown as written
}

func TestImportCursor(t *testing.T) {
	is := is.New(t)
	f, byID := imported(t, "cursor.json")
	r := f.Imported()
	is.Equal(r.Format, config.FormatMCPServers)

	is.Equal(byID["linear.default"].Transport, config.Transport{Kind: config.TransportSSE, URL: "https://mcp.linear.example/sse"}) // no type, path /sse
	is.True(hasNote(r, `"linear"`, "sse"))
	is.Equal(byID["remote-api.default"].Transport, config.Transport{Kind: config.TransportHTTP, URL: "https://api.example.test/mcp",
		Headers: map[string]string{"Authorization": "Bearer ${REMOTE_TOKEN}", "X-Team": "literal-team-secret-77"}}) // ${env:X} is ${X}
	is.Equal(byID["stream.default"].Transport.Kind, config.TransportHTTP) // streamable-http

	local := byID["local.default"].Transport
	is.Equal(local.Args, []string{"${HOME}/servers/local.js", "--root", "${workspaceFolder}"}) // ${userHome} is ${HOME}
	is.Equal(local.Env, map[string]string{"LOCAL_API_KEY": "${LOCAL_API_KEY}"})
	is.True(hasNote(r, "${workspaceFolder}", "environment variable workspaceFolder"))
	is.True(hasNote(r, `"local"`, "envFile not read"))
	is.True(hasNote(r, `"local"`, `"autoApprove", "timeout"`, "ignored"))

	is.True(!byID["paused.default"].IsEnabled()) // disabled stays disabled
	is.True(hasNote(r, `"paused"`, "disabled"))
	noValueIn(t, r, "literal-team-secret-77", "read_file")

	// Served directly: a missing variable is named, with where it is used.
	t.Setenv("REMOTE_TOKEN", "remote-secret-0002")
	t.Setenv("LOCAL_API_KEY", "local-secret-0003")
	_, err := config.Parse(sample(t, "cursor.json"))
	unset, ok := errors.AsType[*config.UnsetVariablesError](err)
	is.True(ok) // workspaceFolder is not set
	is.Equal(unset.Names, []string{"workspaceFolder"})
	is.Equal(unset.Where["workspaceFolder"], []string{"server.sources[local.default].transport.args[2]"})
	is.True(!strings.Contains(err.Error(), "remote-secret-0002") && !strings.Contains(err.Error(), "local-secret-0003"))

	t.Setenv("workspaceFolder", "/src/project")
	parsed, err := config.Parse(sample(t, "cursor.json"))
	is.NoErr(err)
	for _, c := range parsed.Connections() {
		switch c.ID {
		case "remote-api.default":
			is.Equal(c.Transport.Headers["Authorization"], "Bearer remote-secret-0002")
		case "local.default":
			is.Equal(c.Transport.Args, []string{os.Getenv("HOME") + "/servers/local.js", "--root", "/src/project"})
		}
	}
}

func TestImportVSCode(t *testing.T) {
	is := is.New(t)
	f, byID := imported(t, "vscode.json") // comments and trailing commas included
	r := f.Imported()
	is.Equal(r.Format, config.FormatVSCode)
	is.Equal(len(byID), 3)

	is.Equal(byID["perplexity.default"].Transport.Env, map[string]string{
		"PERPLEXITY_API_KEY": "${PERPLEXITY_KEY}",  // an input is a variable of the environment
		"LOG_LEVEL":          "${LOG_LEVEL:-info}", // with the input's default
	})
	is.True(hasNote(r, `password input "perplexity-key" is ${PERPLEXITY_KEY}`, "reads PERPLEXITY_KEY from its environment"))
	is.Equal(byID["github.default"].Transport, config.Transport{Kind: config.TransportHTTP, URL: "https://api.githubcopilot.example/mcp/",
		Headers: map[string]string{"Authorization": "Bearer ${GITHUB_TOKEN}"}}) // "//" in a string is not a comment
	is.Equal(byID["legacy.default"].Transport, config.Transport{Kind: config.TransportSSE, URL: "http://localhost:3001/events"})

	// Served directly, the input's variable must be set.
	t.Setenv("GITHUB_TOKEN", "gh-secret-0004")
	_, err := config.Parse(sample(t, "vscode.json"))
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "PERPLEXITY_KEY is not set")) // the error names the variable
	t.Setenv("PERPLEXITY_KEY", "pplx-secret-0005")
	parsed, err := config.Parse(sample(t, "vscode.json"))
	is.NoErr(err)
	is.Equal(len(parsed.Connections()), 3)
}

func TestImportVSCodeSettings(t *testing.T) {
	is := is.New(t)
	f, byID := imported(t, "vscode_settings.json")
	is.Equal(f.Imported().Format, config.FormatVSCode)
	is.Equal(byID["time.default"].Transport.Args, []string{"mcp-server-time", "--local-timezone=Europe/Paris"})
	is.True(hasNote(f.Imported(), "2 other settings ignored"))
}

func TestImportRefusesWhatItCannotConvert(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{"mcpServers":{"a":{"command":"x","url":"http://h/mcp"}}}`, `server "a": it has both a command and a url`},
		{`{"mcpServers":{"a":{"env":{"K":"v"}}}}`, `server "a": it has neither a command nor a url`},
		{`{"servers":{"a":{"type":"websocket","url":"ws://h"}}}`, `type "websocket" is not stdio`},
		{`{"servers":{"a":{"type":"stdio","url":"http://h/mcp"}}}`, "a stdio server needs a command"},
		{`{"servers":{"a":{"command":"x","args":["${command:pick}"]}}}`, "${command:…} is an editor variable mcpflow cannot resolve"},
		{`{"mcpServers":{"a b":{"command":"x"},"a_b":{"command":"y"}}}`, `servers "a b" and "a_b" both become connection "a_b.default"`},
		{`{"mcpServers":{"":{"command":"x"}}}`, "an empty name"},
		{`{"mcpServers":{"a":{"command":"x","env":{"K":1}}}}`, `server "a"`},
		{`{"version":1,"server":{}}`, "not a Claude Desktop, Cursor or VS Code MCP file"},
		{`[1]`, "not a JSON object"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			is := is.New(t)
			_, err := config.Import([]byte(tc.doc))
			is.True(err != nil)
			t.Log(err)
			is.True(strings.Contains(err.Error(), tc.want))
		})
	}
}

func TestImportedNamesAreConnectionIDs(t *testing.T) {
	for name, want := range map[string]string{
		"github":           "github.default",
		"sequential-think": "sequential-think.default",
		"My Server":        "My_Server.default",
		"@org/server.v2":   "_org_server_v2.default", // a dot would split the id
		"-dash":            "_-dash.default",
		"café":             "caf_.default",
	} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			f, err := config.Import([]byte(`{"mcpServers":{"` + name + `":{"command":"x"}}}`))
			is.NoErr(err)
			id := f.Server.Sources[0].ID
			is.Equal(id, want)
			is.NoErr(config.ValidateID(id))
		})
	}
}

func TestImportMapsInputIDsToVariableNames(t *testing.T) {
	for id, want := range map[string]string{
		"apiKey":         "API_KEY",
		"perplexity-key": "PERPLEXITY_KEY",
		"github_token":   "GITHUB_TOKEN",
		"key2Name":       "KEY2_NAME",
		"1st":            "_1ST",
	} {
		t.Run(id, func(t *testing.T) {
			is := is.New(t)
			f, err := config.Import([]byte(`{"servers":{"s":{"command":"x","env":{"K":"${input:` + id + `}"}}}}`))
			is.NoErr(err)
			is.Equal(f.Server.Sources[0].Transport.Env["K"], "${"+want+"}")
			is.True(hasNote(f.Imported(), "undeclared VS Code input", want))
		})
	}
}

func TestANativeConfigIsNotForeign(t *testing.T) {
	is := is.New(t)
	is.True(!config.IsForeign([]byte(valid)))
	is.True(!config.IsForeign([]byte(`{"version":1,"mcpServers":{}}`))) // mixed: the native parser rejects it
	is.True(!config.IsForeign([]byte(`not json`)))
	f, err := config.Parse([]byte(valid))
	is.NoErr(err)
	is.True(f.Imported() == nil)
}
