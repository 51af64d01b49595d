package config

// Import converts the MCP server files users already keep into mcpflow's
// config:
//
//   - {"mcpServers": {NAME: {...}}}: Claude Desktop, Claude Code (.mcp.json)
//     and Cursor (mcp.json);
//   - {"servers": {NAME: {...}}, "inputs": [...]}: VS Code (mcp.json), also
//     nested as "mcp" in a VS Code settings.json.
//
// Each server becomes the connection NAME.default (NAME with every run of
// characters outside [A-Za-z0-9_-] replaced by one "_"), over stdio
// (command, args, env, cwd) or HTTP (url, headers; streamable HTTP unless
// the type says sse or the URL path ends in /sse). Editor variables become
// ${VAR} references: ${env:NAME} → ${NAME}, ${userHome} → ${HOME}, and a
// VS Code ${input:ID} → ${ID in upper snake case}, which mcpflow reads
// from its environment rather than prompting for. Fields mcpflow has no
// use for are skipped and reported. Values are copied as written, never
// expanded, and never appear in the report.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Import formats.
const (
	// FormatMCPServers is the {"mcpServers": …} file of Claude Desktop,
	// Claude Code and Cursor.
	FormatMCPServers = "mcpServers"
	// FormatVSCode is VS Code's {"servers": …, "inputs": …} file.
	FormatVSCode = "vscode"
)

// ImportReport says how Import converted a file.
type ImportReport struct {
	// Format is FormatMCPServers or FormatVSCode.
	Format string
	// Servers are the converted servers, sorted by connection id.
	Servers []ImportedServer
	// Notes say what was renamed, skipped or needs the environment; they
	// name fields and variables, never values.
	Notes []string
}

// ImportedServer is one server of the file and the connection it became.
type ImportedServer struct {
	Name      string // as the file names it
	ID        string // NAME.default
	Transport string // stdio, http or sse
	Enabled   bool
}

// Imported is the report of the conversion Parse or Import made of a
// Claude Desktop, Cursor or VS Code file; nil for an mcpflow config.
func (f *File) Imported() *ImportReport { return f.imported }

// IsForeign reports whether data is a Claude Desktop, Cursor or VS Code MCP
// file rather than an mcpflow config: a JSON object (comments allowed)
// with mcpServers, servers or mcp.servers and neither version nor server.
func IsForeign(data []byte) bool {
	top, err := decodeObject(data)
	if err != nil {
		return false
	}
	_, ok := foreignServers(top)
	return ok
}

// Import converts a Claude Desktop, Cursor or VS Code MCP file into an
// mcpflow config, with its ${VAR} references unexpanded and not yet
// validated (Parse does both). The file's report is f.Imported().
func Import(data []byte) (*File, error) {
	top, err := decodeObject(data)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	servers, ok := foreignServers(top)
	if !ok {
		return nil, errors.New("import: not a Claude Desktop, Cursor or VS Code MCP file: no top-level mcpServers or servers object")
	}
	im := &importer{report: &ImportReport{Format: servers.format}, inputs: map[string]vscodeInput{}, noted: map[string]bool{}}
	if err := im.readInputs(servers.inputs); err != nil {
		return nil, err
	}
	switch {
	case len(servers.ignored) > 0 && servers.settings:
		im.note("read the mcp section of a VS Code settings file; its %d other settings ignored", len(servers.ignored))
	case len(servers.ignored) > 0:
		im.note("top-level %s ignored", quoteList(servers.ignored))
	}
	f := &File{Version: 1, imported: im.report}
	byID := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(servers.entries)) {
		conn, err := im.server(name, servers.entries[name])
		if err != nil {
			return nil, fmt.Errorf("import: server %q: %w", name, err)
		}
		if other, taken := byID[conn.ID]; taken {
			return nil, fmt.Errorf("import: servers %q and %q both become connection %q; rename one", other, name, conn.ID)
		}
		byID[conn.ID] = name
		f.Server.Sources = append(f.Server.Sources, conn)
		im.report.Servers = append(im.report.Servers, ImportedServer{Name: name, ID: conn.ID, Transport: conn.Transport.Kind, Enabled: conn.IsEnabled()})
	}
	sortByID(f.Server.Sources)
	slices.SortFunc(im.report.Servers, func(a, b ImportedServer) int { return strings.Compare(a.ID, b.ID) })
	return f, nil
}

// foreign is the server part of a foreign file.
type foreign struct {
	format  string
	entries map[string]json.RawMessage
	inputs  json.RawMessage // VS Code's inputs, or nil
	ignored []string        // other top-level keys
	// settings: the servers are the mcp section of a VS Code settings.json.
	settings bool
}

// foreignServers finds the servers of a foreign file's top-level object.
func foreignServers(top map[string]json.RawMessage) (foreign, bool) {
	if _, ok := top["version"]; ok {
		return foreign{}, false
	}
	if _, ok := top["server"]; ok {
		return foreign{}, false
	}
	var f foreign
	var raw json.RawMessage
	var used []string
	switch {
	case top["mcpServers"] != nil:
		f.format, raw, used = FormatMCPServers, top["mcpServers"], []string{"mcpServers"}
	case top["servers"] != nil:
		f.format, raw, f.inputs, used = FormatVSCode, top["servers"], top["inputs"], []string{"servers", "inputs"}
	default: // a VS Code settings.json: {"mcp": {"servers": …}}
		var settings map[string]json.RawMessage
		if json.Unmarshal(top["mcp"], &settings) != nil || settings["servers"] == nil {
			return foreign{}, false
		}
		f.format, raw, f.inputs, used, f.settings = FormatVSCode, settings["servers"], settings["inputs"], []string{"mcp"}, true
	}
	if json.Unmarshal(raw, &f.entries) != nil || f.entries == nil {
		return foreign{}, false
	}
	for k := range top {
		if !slices.Contains(used, k) {
			f.ignored = append(f.ignored, k)
		}
	}
	slices.Sort(f.ignored)
	return f, true
}

// foreignServer is one server entry, in any of the formats.
type foreignServer struct {
	Type      string            `json:"type"`
	Command   string            `json:"command"`
	Args      []string          `json:"args"`
	Env       map[string]string `json:"env"`
	Cwd       string            `json:"cwd"`
	URL       string            `json:"url"`
	ServerURL string            `json:"serverUrl"` // Windsurf's name for url
	Headers   map[string]string `json:"headers"`
	Disabled  bool              `json:"disabled"`
}

// knownFields are the foreignServer fields.
var knownFields = []string{"type", "command", "args", "env", "cwd", "url", "serverUrl", "headers", "disabled"}

// vscodeInput is a VS Code input: a value VS Code prompts for.
type vscodeInput struct {
	ID       string `json:"id"`
	Default  string `json:"default"`
	Password bool   `json:"password"`
}

// importer converts one file.
type importer struct {
	report *ImportReport
	inputs map[string]vscodeInput
	// noted holds the keys of the notes made once (noteOnce).
	noted map[string]bool
}

func (im *importer) note(format string, args ...any) {
	im.report.Notes = append(im.report.Notes, fmt.Sprintf(format, args...))
}

func (im *importer) readInputs(raw json.RawMessage) error {
	if raw == nil {
		return nil
	}
	var inputs []vscodeInput
	if err := json.Unmarshal(raw, &inputs); err != nil {
		return fmt.Errorf("import: inputs: %w", err)
	}
	for _, in := range inputs {
		im.inputs[in.ID] = in
	}
	return nil
}

// server converts one entry.
func (im *importer) server(name string, raw json.RawMessage) (Connection, error) {
	var s foreignServer
	if err := json.Unmarshal(raw, &s); err != nil {
		return Connection{}, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return Connection{}, err
	}
	provider := connectionName(name)
	if provider == "" {
		return Connection{}, errors.New("an empty name cannot name a connection")
	}
	conn := Connection{Kind: "mcp", ID: provider + ".default"}
	if provider != name {
		im.note("server %q is connection %q: characters outside [A-Za-z0-9_-] became _", name, conn.ID)
	}
	if s.Disabled {
		conn.Enabled = new(false)
		im.note("server %q is disabled in the file: imported with enabled false", name)
	}
	kind, err := im.transportKind(name, s)
	if err != nil {
		return Connection{}, err
	}
	t := Transport{Kind: kind}
	var refsErr error
	ref := func(v string) string {
		out, err := im.refs(v)
		refsErr = cmp.Or(refsErr, err)
		return out
	}
	refMap := func(m map[string]string) map[string]string {
		if len(m) == 0 {
			return nil
		}
		out := make(map[string]string, len(m))
		for k, v := range m {
			out[k] = ref(v)
		}
		return out
	}
	var unused []string
	if kind == TransportStdio {
		t.Command, t.Cwd, t.Env = ref(s.Command), ref(s.Cwd), refMap(s.Env)
		for _, a := range s.Args {
			t.Args = append(t.Args, ref(a))
		}
		if len(s.Headers) > 0 {
			unused = append(unused, "headers")
		}
	} else {
		t.URL, t.Headers = ref(cmp.Or(s.URL, s.ServerURL)), refMap(s.Headers)
		for field, set := range map[string]bool{"args": len(s.Args) > 0, "env": len(s.Env) > 0, "cwd": s.Cwd != ""} {
			if set {
				unused = append(unused, field)
			}
		}
	}
	if refsErr != nil {
		return Connection{}, refsErr
	}
	if len(unused) > 0 {
		slices.Sort(unused)
		im.note("server %q: %s ignored: a %s server takes none", name, quoteList(unused), kind)
	}
	im.noteSkipped(name, fields)
	conn.Transport = t
	return conn, nil
}

// transportKind is the mcpflow transport of s.
func (im *importer) transportKind(name string, s foreignServer) (string, error) {
	url := cmp.Or(s.URL, s.ServerURL)
	typ := strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(s.Type))
	switch {
	case s.Command != "" && url != "":
		return "", errors.New("it has both a command and a url; keep one")
	case typ == "stdio" || (typ == "" && s.Command != ""):
		if s.Command == "" {
			return "", errors.New("a stdio server needs a command")
		}
		return TransportStdio, nil
	case typ != "" && typ != "sse" && typ != "http" && typ != "streamablehttp":
		return "", fmt.Errorf("type %q is not stdio, http, streamable-http or sse", s.Type)
	case url == "":
		return "", errors.New("it has neither a command nor a url")
	case typ == "sse":
		return TransportSSE, nil
	case typ == "" && ssePath(url):
		im.note("server %q has no type and its URL path ends in /sse: imported as the legacy sse transport", name)
		return TransportSSE, nil
	}
	return TransportHTTP, nil
}

// ssePath reports whether a URL's path ends in /sse.
func ssePath(url string) bool {
	path, _, _ := strings.Cut(url, "?")
	path, _, _ = strings.Cut(path, "#")
	return strings.HasSuffix(strings.TrimSuffix(path, "/"), "/sse")
}

// noteSkipped reports the fields of a server that mcpflow does not use.
func (im *importer) noteSkipped(name string, fields map[string]json.RawMessage) {
	var other []string
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		switch {
		case slices.Contains(knownFields, k):
		case k == "envFile":
			im.note("server %q: envFile not read: list its variables under env as \"NAME\": \"${NAME}\" and set them in mcpflow's environment", name)
		case k == "auth" || k == "oauth":
			im.note("server %q: %s not imported: mcpflow keeps credentials in auth records (workflow.admin.auth.save) referenced by auth_ref", name, k)
		default:
			other = append(other, k)
		}
	}
	if len(other) > 0 {
		im.note("server %q: %s ignored: mcpflow has no equivalent", name, quoteList(other))
	}
}

// editorRef matches an editor's ${...} variable.
var editorRef = regexp.MustCompile(`\$\{([^}]*)\}`)

// refs rewrites the editor variables of v as mcpflow ${VAR} references.
func (im *importer) refs(v string) (string, error) {
	var err error
	out := editorRef.ReplaceAllStringFunc(v, func(m string) string {
		body := m[2 : len(m)-1]
		prefix, rest, scoped := strings.Cut(body, ":")
		switch {
		case !scoped || strings.HasPrefix(rest, "-"): // ${NAME} or ${NAME:-default}
		case prefix == "env":
			return "${" + rest + "}"
		case prefix == "input":
			return im.input(rest)
		default:
			err = cmp.Or(err, fmt.Errorf("${%s:…} is an editor variable mcpflow cannot resolve; replace it with a value or a ${VAR}", prefix))
			return m
		}
		switch body {
		case "userHome":
			return "${HOME}"
		case "pathSeparator", "/":
			return string(filepath.Separator)
		case "workspaceFolder", "workspaceFolderBasename":
			im.noteOnce("${"+body+"}", "${%s} is an editor variable: mcpflow reads it from the environment variable %s", body, body)
		}
		return m
	})
	return out, err
}

// input is the reference a VS Code ${input:ID} becomes.
func (im *importer) input(id string) string {
	name := envName(id)
	in, declared := im.inputs[id]
	ref := "${" + name + "}"
	if declared && in.Default != "" && !strings.Contains(in.Default, "}") {
		ref = "${" + name + ":-" + in.Default + "}"
	}
	what := "VS Code input"
	switch {
	case !declared:
		what = "undeclared VS Code input"
	case in.Password:
		what = "VS Code password input"
	}
	im.noteOnce("input:"+id, "%s %q is %s: mcpflow reads %s from its environment", what, id, ref, name)
	return ref
}

// noteOnce notes format once per key.
func (im *importer) noteOnce(key, format string, args ...any) {
	if im.noted[key] {
		return
	}
	im.noted[key] = true
	im.note(format, args...)
}

// connectionName is name with every run of characters outside
// [A-Za-z0-9_-] replaced by one "_", and "_" put before a leading "-",
// so that name.default is a connection id.
func connectionName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r < 128 && (r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
			b.WriteRune(r)
		case !strings.HasSuffix(b.String(), "_"):
			b.WriteByte('_')
		}
	}
	if out := b.String(); strings.HasPrefix(out, "-") {
		return "_" + out
	}
	return b.String()
}

// envName is id as an environment variable name: upper snake case
// ("apiKey" and "api-key" are API_KEY).
func envName(id string) string {
	var b strings.Builder
	underscore := func() {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "_") {
			b.WriteByte('_')
		}
	}
	lowerBefore := false
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteString(strings.ToUpper(string(r)))
			lowerBefore = true
		case r >= 'A' && r <= 'Z':
			if lowerBefore {
				underscore()
			}
			b.WriteRune(r)
			lowerBefore = false
		default:
			underscore()
			lowerBefore = false
		}
	}
	name := strings.TrimSuffix(b.String(), "_")
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		name = "_" + name
	}
	return name
}

// quoteList is keys quoted and joined.
func quoteList(keys []string) string {
	quoted := make([]string, len(keys))
	for i, k := range keys {
		quoted[i] = fmt.Sprintf("%q", k)
	}
	return strings.Join(quoted, ", ")
}

// decodeObject decodes a JSON object whose text may hold comments and
// trailing commas, as VS Code's files do.
func decodeObject(data []byte) (map[string]json.RawMessage, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(stripJSONC(data), &top); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if top == nil {
		return nil, errors.New("not a JSON object")
	}
	return top, nil
}

// stripJSONC removes // and /* */ comments, then commas before a closing
// } or ], outside strings.
func stripJSONC(data []byte) []byte {
	if !bytes.ContainsAny(data, "/,") {
		return data
	}
	out := make([]byte, 0, len(data))
	scanJSON(data, func(i int, inString bool) int {
		c := data[i]
		switch {
		case inString || c != '/' || i+1 == len(data):
		case data[i+1] == '/':
			end := bytes.IndexByte(data[i:], '\n')
			if end < 0 {
				return len(data)
			}
			return i + end
		case data[i+1] == '*':
			end := bytes.Index(data[i+2:], []byte("*/"))
			out = append(out, ' ')
			if end < 0 {
				return len(data)
			}
			return i + 2 + end + 2
		}
		out = append(out, c)
		return i + 1
	})
	noCommas := make([]byte, 0, len(out))
	scanJSON(out, func(i int, inString bool) int {
		if !inString && out[i] == ',' {
			rest := bytes.TrimLeft(out[i+1:], " \t\r\n")
			if len(rest) > 0 && (rest[0] == '}' || rest[0] == ']') {
				return i + 1
			}
		}
		noCommas = append(noCommas, out[i])
		return i + 1
	})
	return noCommas
}

// scanJSON calls step at each byte of data, saying whether it is inside a
// string (its opening quote is not, its closing one is); step returns the
// index to go on from.
func scanJSON(data []byte, step func(i int, inString bool) int) {
	inString, escaped := false, false
	for i := 0; i < len(data); {
		c := data[i]
		was := inString
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		}
		i = step(i, was)
	}
}
