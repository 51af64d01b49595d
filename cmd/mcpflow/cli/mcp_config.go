package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpflow/mcpflow/api/mcpface"
)

// MCP hosts `mcpflow mcp config` writes snippets for.
const (
	hostClaudeDesktop = "claude-desktop"
	hostClaudeCode    = "claude-code"
	hostCursor        = "cursor"
	hostVSCode        = "vscode"
)

// mcpHosts are the hosts, in the order help lists them.
var mcpHosts = []string{hostClaudeDesktop, hostClaudeCode, hostCursor, hostVSCode}

// hostSpec is what a snippet says: the server's name in the host's
// config, and either the command line of `mcpflow mcp` or /mcp's URL.
type hostSpec struct {
	name    string
	command string // the mcpflow executable the host launches
	url     string // the server's WebSocket URL, "" for the default
	http    bool   // /mcp over streamable HTTP instead of stdio
	token   bool   // a token is used: the snippet refers to one, never holds it
}

// snippet is what `mcpflow mcp config` prints: text, on stdout (a JSON
// document or a command line), and notes for the reader, on stderr.
type snippet struct {
	text  string
	notes []string
}

// tokenInput is the id of VS Code's input that prompts for the token.
const tokenInput = "mcpflow-token"

// serverName is what a host accepts as a server's name (VS Code's rule,
// the strictest of the four).
var serverName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)

func newMCPConfigCommand(r *remote) *cobra.Command {
	spec := hostSpec{}
	cmd := &cobra.Command{
		Use:     "config " + strings.Join(mcpHosts, "|"),
		Example: "  mcpflow mcp config claude-desktop\n  mcpflow mcp config cursor --http",
		Short:   "Print the snippet that adds mcpflow to an MCP host",
		Long: `Print the snippet that adds mcpflow to an MCP host: by default
'mcpflow mcp' over stdio, with --http the server's /mcp over streamable
HTTP (its URL derived from --url: ws://HOST:PORT/ws becomes
http://HOST:PORT/mcp).

  claude-desktop  claude_desktop_config.json ({"mcpServers": …}); stdio only
  claude-code     a 'claude mcp add' command line (project scope: .mcp.json)
  cursor          .cursor/mcp.json ({"mcpServers": …})
  vscode          .vscode/mcp.json ({"servers": …, "inputs": …})

When a token is used (--token or $` + envToken + `), the snippet refers to
it — $` + envToken + ` in the host's environment, or a VS Code input — and
never holds its value. The snippet goes to stdout, notes to stderr.`,
		Args:      cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		ValidArgs: mcpHosts,
		RunE: func(cmd *cobra.Command, args []string) error {
			spec.url = firstSet(r.url, os.Getenv(envURL))
			spec.token = firstSet(r.token, os.Getenv(envToken)) != ""
			s, err := hostSnippet(args[0], spec)
			if err != nil {
				return err
			}
			return s.print(cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.BoolVar(&spec.http, "http", false, "add the server's /mcp over streamable HTTP instead of 'mcpflow mcp' over stdio")
	f.StringVar(&spec.name, "name", "mcpflow", "the server's name in the host's config")
	f.StringVar(&spec.command, "command", "mcpflow", "the mcpflow executable the host launches (an absolute path if the host does not search your PATH)")
	return cmd
}

// print writes the snippet to out and its notes to notes.
func (s snippet) print(out, notes io.Writer) error {
	if _, err := fmt.Fprintln(out, s.text); err != nil {
		return err
	}
	for _, n := range s.notes {
		if _, err := fmt.Fprintln(notes, "note:", n); err != nil {
			return err
		}
	}
	return nil
}

// hostSnippet is the snippet that adds spec to host.
func hostSnippet(host string, spec hostSpec) (snippet, error) {
	if !serverName.MatchString(spec.name) {
		return snippet{}, fmt.Errorf("--name %q: a server name is a letter, then letters, digits, '_' or '-'", spec.name)
	}
	if spec.command == "" {
		return snippet{}, fmt.Errorf("--command: empty")
	}
	var endpoint string
	if spec.http {
		u, err := mcpURL(firstSet(spec.url, defaultURL))
		if err != nil {
			return snippet{}, err
		}
		endpoint = u
	}
	switch host {
	case hostClaudeDesktop:
		s, err := claudeDesktop(spec)
		return s.withNameNote(spec.name), err
	case hostClaudeCode:
		return claudeCode(spec, endpoint).withNameNote(spec.name), nil
	case hostCursor:
		return cursor(spec, endpoint)
	case hostVSCode:
		return vscode(spec, endpoint)
	}
	return snippet{}, fmt.Errorf("unknown host %q: one of %s", host, strings.Join(mcpHosts, ", "))
}

// claudeNameRoom is the longest server name with which Claude's tool
// names, mcp__NAME__TOOL, stay within its 64 characters for mcpflow's
// longest tool name.
const claudeNameRoom = 64 - len("mcp____") - mcpface.MaxToolName

// withNameNote warns when a server name leaves Claude no room for
// mcpflow's longest tool names.
func (s snippet) withNameNote(name string) snippet {
	if len(name) > claudeNameRoom {
		s.notes = append(s.notes, fmt.Sprintf("a server name longer than %d characters makes Claude's name of mcpflow's longest tools (mcp__%s__…) exceed its 64", claudeNameRoom, name))
	}
	return s
}

// stdioArgs are the arguments of `mcpflow mcp` as a host launches it. The
// URL is shown without user info or query: a secret in one is never
// printed.
func stdioArgs(spec hostSpec) ([]string, []string) {
	args := []string{"mcp"}
	var notes []string
	if spec.url != "" {
		shown := redactURL(spec.url)
		if shown != spec.url {
			notes = append(notes, "the URL is shown without its user info and query")
		}
		args = append(args, "--url", shown)
	}
	return args, notes
}

// mcpURL is /mcp's URL on the listener whose /ws is wsURL.
func mcpURL(wsURL string) (string, error) {
	u, err := url.Parse(wsURL)
	if err != nil {
		return "", fmt.Errorf("--url: %w", err)
	}
	switch u.Scheme {
	case "ws", "http":
		u.Scheme = "http"
	case "wss", "https":
		u.Scheme = "https"
	default:
		return "", fmt.Errorf("--url %s: want ws://HOST:PORT/ws (or wss://)", redactURL(wsURL))
	}
	if u.Host == "" {
		return "", fmt.Errorf("--url %s: no host", redactURL(wsURL))
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/ws") + "/mcp"
	u.User, u.RawPath, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", "", false, "", ""
	return u.String(), nil
}

// claudeDesktop is claude_desktop_config.json's entry. Claude Desktop
// launches commands only (its remote connectors take no header), and
// expands no variable in its config.
func claudeDesktop(spec hostSpec) (snippet, error) {
	if spec.http {
		return snippet{}, fmt.Errorf("claude-desktop: its claude_desktop_config.json launches commands only, and its remote connectors (Settings > Connectors) send no Authorization header: use the stdio snippet (without --http), whose 'mcpflow mcp' talks to the server")
	}
	server, notes := entry(spec, "", "PASTE-YOUR-TOKEN", false)
	if spec.token {
		notes = append(notes, "Claude Desktop expands no variable in its config: replace PASTE-YOUR-TOKEN with the token, and keep the file private")
	}
	notes = append(notes, "add the entry to claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/, Windows: %APPDATA%\\Claude\\) and restart Claude Desktop",
		"Claude Desktop does not search your shell's PATH: give --command the absolute path of mcpflow if it is not found")
	return jsonSnippet(map[string]any{"mcpServers": map[string]any{spec.name: server}}, notes)
}

// claudeCode is a `claude mcp add` command line, in project scope: it
// writes .mcp.json, where Claude Code expands ${VAR} from its environment
// (in command, args, env, url and headers).
func claudeCode(spec hostSpec, endpoint string) snippet {
	ref := "${" + envToken + "}"
	words := []string{"claude", "mcp", "add", "--scope", "project"}
	notes := []string{"the command writes .mcp.json in the current directory; Claude Code expands " + ref + " from its environment when it starts the server"}
	if spec.http {
		words = append(words, "--transport", "http")
		if spec.token {
			words = append(words, "--header", shellQuote("Authorization: Bearer "+ref))
			notes = append(notes, "some Claude Code versions sent a ${VAR} in headers unexpanded (anthropics/claude-code#6204): if calls get 401, use the stdio snippet")
		}
		return snippet{text: strings.Join(append(words, spec.name, endpoint), " "), notes: notes}
	}
	words = append(words, "--transport", "stdio")
	if spec.token {
		words = append(words, "--env", shellQuote(envToken+"="+ref))
	}
	args, more := stdioArgs(spec)
	words = append(words, spec.name, "--", shellQuote(spec.command))
	for _, a := range args {
		words = append(words, shellQuote(a))
	}
	return snippet{text: strings.Join(words, " "), notes: append(notes, more...)}
}

// cursor is .cursor/mcp.json's entry; Cursor expands ${env:NAME} from
// its environment.
func cursor(spec hostSpec, endpoint string) (snippet, error) {
	server, notes := entry(spec, endpoint, "${env:"+envToken+"}", false)
	notes = append(notes, "add the entry to .cursor/mcp.json in the project, or to ~/.cursor/mcp.json for every project; Cursor expands ${env:"+envToken+"} from its environment")
	return jsonSnippet(map[string]any{"mcpServers": map[string]any{spec.name: server}}, notes)
}

// vscode is .vscode/mcp.json's entry: the token, when one is used, comes
// from an input VS Code prompts for once and keeps in its secret storage.
func vscode(spec hostSpec, endpoint string) (snippet, error) {
	server, notes := entry(spec, endpoint, "${input:"+tokenInput+"}", true)
	doc := map[string]any{"servers": map[string]any{spec.name: server}}
	if spec.token {
		doc["inputs"] = []map[string]any{{"type": "promptString", "id": tokenInput, "description": "mcpflow bearer token", "password": true}}
		notes = append(notes, "VS Code asks for the token once and keeps it in its secret storage")
	}
	notes = append(notes, "add the entry to .vscode/mcp.json in the workspace, or to your user mcp.json (MCP: Open User Configuration)")
	return jsonSnippet(doc, notes)
}

// entry is a JSON config's server entry: a command (stdio) or a url and
// headers (HTTP), the token as tokenRef; typed adds the "type" field
// VS Code wants.
func entry(spec hostSpec, endpoint, tokenRef string, typed bool) (map[string]any, []string) {
	var server map[string]any
	var notes []string
	if spec.http {
		server = map[string]any{"url": endpoint}
		if spec.token {
			server["headers"] = map[string]string{"Authorization": "Bearer " + tokenRef}
		}
	} else {
		var args []string
		args, notes = stdioArgs(spec)
		server = map[string]any{"command": spec.command, "args": args}
		if spec.token {
			server["env"] = map[string]string{envToken: tokenRef}
		}
	}
	if typed {
		server["type"] = "stdio"
		if spec.http {
			server["type"] = "http"
		}
	}
	return server, notes
}

// jsonSnippet is doc indented.
func jsonSnippet(doc any, notes []string) (snippet, error) {
	raw, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return snippet{}, fmt.Errorf("encode snippet: %w", err)
	}
	return snippet{text: string(raw), notes: notes}, nil
}

// shellQuote quotes s for a POSIX shell unless it needs none; a ${VAR}
// inside single quotes reaches the host unexpanded, as meant.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
