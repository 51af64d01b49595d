package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestMCPConfigSnippets: each host's snippet, stdio and HTTP, with and
// without a token, is the host's format (valid JSON where it is JSON)
// and refers to the token without holding it.
func TestMCPConfigSnippets(t *testing.T) {
	const remoteWS = "ws://10.0.0.5:9000/ws"
	stdio := func(url string) []any {
		if url == "" {
			return []any{"mcp"}
		}
		return []any{"mcp", "--url", url}
	}
	vscodeInput := []any{map[string]any{"type": "promptString", "id": "mcpflow-token", "description": "mcpflow bearer token", "password": true}}
	for _, tc := range []struct {
		name string
		host string
		spec hostSpec
		json any    // the snippet, when JSON
		line string // the snippet, when a command line
	}{
		{
			name: "claude desktop stdio",
			host: hostClaudeDesktop, spec: hostSpec{},
			json: map[string]any{"mcpServers": map[string]any{"mcpflow": map[string]any{"command": "mcpflow", "args": stdio("")}}},
		},
		{
			name: "claude desktop stdio with a token and a url",
			host: hostClaudeDesktop, spec: hostSpec{url: remoteWS, token: true},
			json: map[string]any{"mcpServers": map[string]any{"mcpflow": map[string]any{
				"command": "mcpflow", "args": stdio(remoteWS), "env": map[string]any{"MCPFLOW_TOKEN": "PASTE-YOUR-TOKEN"}}}},
		},
		{
			name: "claude code stdio",
			host: hostClaudeCode, spec: hostSpec{},
			line: "claude mcp add --scope project --transport stdio mcpflow -- mcpflow mcp",
		},
		{
			name: "claude code stdio with a token",
			host: hostClaudeCode, spec: hostSpec{url: remoteWS, token: true, command: "/opt/mcpflow/bin/mcpflow"},
			line: "claude mcp add --scope project --transport stdio --env 'MCPFLOW_TOKEN=${MCPFLOW_TOKEN}' mcpflow -- /opt/mcpflow/bin/mcpflow mcp --url ws://10.0.0.5:9000/ws",
		},
		{
			name: "claude code http with a token",
			host: hostClaudeCode, spec: hostSpec{url: remoteWS, token: true, http: true},
			line: "claude mcp add --scope project --transport http --header 'Authorization: Bearer ${MCPFLOW_TOKEN}' mcpflow http://10.0.0.5:9000/mcp",
		},
		{
			name: "claude code http, default url",
			host: hostClaudeCode, spec: hostSpec{http: true},
			line: "claude mcp add --scope project --transport http mcpflow http://127.0.0.1:8765/mcp",
		},
		{
			name: "cursor stdio with a token",
			host: hostCursor, spec: hostSpec{token: true},
			json: map[string]any{"mcpServers": map[string]any{"mcpflow": map[string]any{
				"command": "mcpflow", "args": stdio(""), "env": map[string]any{"MCPFLOW_TOKEN": "${env:MCPFLOW_TOKEN}"}}}},
		},
		{
			name: "cursor http with a token",
			host: hostCursor, spec: hostSpec{url: "wss://flows.example.com/ws", token: true, http: true},
			json: map[string]any{"mcpServers": map[string]any{"mcpflow": map[string]any{
				"url": "https://flows.example.com/mcp", "headers": map[string]any{"Authorization": "Bearer ${env:MCPFLOW_TOKEN}"}}}},
		},
		{
			name: "cursor http without a token",
			host: hostCursor, spec: hostSpec{http: true},
			json: map[string]any{"mcpServers": map[string]any{"mcpflow": map[string]any{"url": "http://127.0.0.1:8765/mcp"}}},
		},
		{
			name: "vscode stdio",
			host: hostVSCode, spec: hostSpec{name: "flows"},
			json: map[string]any{"servers": map[string]any{"flows": map[string]any{"type": "stdio", "command": "mcpflow", "args": stdio("")}}},
		},
		{
			name: "vscode stdio with a token",
			host: hostVSCode, spec: hostSpec{url: remoteWS, token: true},
			json: map[string]any{
				"servers": map[string]any{"mcpflow": map[string]any{"type": "stdio", "command": "mcpflow", "args": stdio(remoteWS),
					"env": map[string]any{"MCPFLOW_TOKEN": "${input:mcpflow-token}"}}},
				"inputs": vscodeInput,
			},
		},
		{
			name: "vscode http with a token",
			host: hostVSCode, spec: hostSpec{url: "ws://127.0.0.1:8765/ws", token: true, http: true},
			json: map[string]any{
				"servers": map[string]any{"mcpflow": map[string]any{"type": "http", "url": "http://127.0.0.1:8765/mcp",
					"headers": map[string]any{"Authorization": "Bearer ${input:mcpflow-token}"}}},
				"inputs": vscodeInput,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			spec := tc.spec
			if spec.name == "" {
				spec.name = "mcpflow"
			}
			if spec.command == "" {
				spec.command = "mcpflow"
			}
			s, err := hostSnippet(tc.host, spec)
			is.NoErr(err)
			is.True(len(s.notes) > 0) // it says where the snippet goes
			if tc.line != "" {
				is.Equal(s.text, tc.line)
				return
			}
			var got any
			is.NoErr(json.Unmarshal([]byte(s.text), &got)) // valid JSON
			is.Equal(got, tc.json)
		})
	}
}

// TestMCPConfigRefusals: what a host cannot take is refused with the
// reason.
func TestMCPConfigRefusals(t *testing.T) {
	for _, tc := range []struct {
		host string
		spec hostSpec
		want string
	}{
		{hostClaudeDesktop, hostSpec{http: true}, "launches commands only"},
		{hostCursor, hostSpec{http: true, url: "tcp://h:1/ws"}, "want ws://"},
		{hostVSCode, hostSpec{name: "9lives"}, "a server name is a letter"},
	} {
		is := is.New(t)
		if tc.spec.name == "" {
			tc.spec.name = "mcpflow"
		}
		tc.spec.command = "mcpflow"
		_, err := hostSnippet(tc.host, tc.spec)
		is.True(err != nil)
		is.True(strings.Contains(err.Error(), tc.want)) // says why
	}
}

// TestMCPConfigNeverPrintsTheToken: a token given on argv or in the
// environment, or a secret in the URL's query, appears in neither the
// snippet nor the notes; the snippet alone is on stdout.
func TestMCPConfigNeverPrintsTheToken(t *testing.T) {
	is := is.New(t)
	const secret = "s3cret-token-value"
	for _, host := range mcpHosts {
		code, out, errOut := runCLI("mcp", "config", host, "--token", secret, "--url", "ws://u:"+secret+"@127.0.0.1:8765/ws?k="+secret)
		is.Equal(code, ExitOK)
		is.True(!strings.Contains(out+errOut, secret))  // never printed
		is.True(strings.Contains(out, "MCPFLOW_TOKEN")) // referred to
		is.True(strings.Contains(errOut, "note:"))      // notes on stderr
		if host != hostClaudeCode {
			var doc any
			is.NoErr(json.Unmarshal([]byte(out), &doc)) // stdout is the JSON alone
		}
	}
	t.Setenv(envToken, secret)
	code, out, _ := runCLI("mcp", "config", hostCursor, "--http")
	is.Equal(code, ExitOK)
	is.True(!strings.Contains(out, secret))
	is.True(strings.Contains(out, "${env:MCPFLOW_TOKEN}")) // the environment's token is referred to
}

// TestMCPConfigWarnsOfALongName: Claude prefixes tools with the server's
// name; one too long to leave room for mcpflow's 48 gets a note.
func TestMCPConfigWarnsOfALongName(t *testing.T) {
	is := is.New(t)
	s, err := hostSnippet(hostClaudeCode, hostSpec{name: "mcpflow-prod", command: "mcpflow"})
	is.NoErr(err)
	is.True(strings.Contains(strings.Join(s.notes, "\n"), "exceed its 64"))
	s, err = hostSnippet(hostClaudeCode, hostSpec{name: "mcpflow", command: "mcpflow"})
	is.NoErr(err)
	is.True(!strings.Contains(strings.Join(s.notes, "\n"), "exceed its 64"))
}

func TestMCPConfigUnknownHostIsAUsageError(t *testing.T) {
	is := is.New(t)
	code, _, errOut := runCLI("mcp", "config", "emacs")
	is.Equal(code, ExitError)
	is.True(strings.Contains(errOut, "emacs"))
}
