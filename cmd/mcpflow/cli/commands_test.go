package cli

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/spf13/cobra"

	"github.com/mcpflow/mcpflow/actors/workflow"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

// visible calls fn on every command of the tree that is not hidden.
func visible(cmd *cobra.Command, fn func(*cobra.Command)) {
	if cmd.Hidden {
		return
	}
	fn(cmd)
	for _, sub := range cmd.Commands() {
		visible(sub, fn)
	}
}

func TestEveryCommandsHelpHasAnExample(t *testing.T) {
	is := is.New(t)
	count := 0
	visible(NewRootCommand(), func(cmd *cobra.Command) {
		if cmd.Example == "" {
			t.Logf("%s has no example", cmd.CommandPath())
		}
		is.True(cmd.Example != "") // every command shows how it is used
		path := strings.Fields(cmd.CommandPath())[1:]
		_, out, _ := runCLI(append(path, "--help")...)
		is.True(strings.Contains(out, "Examples:"))
		count++
	})
	is.True(count > 60)
}

func TestParseArtifactRef(t *testing.T) {
	is := is.New(t)
	for ref, want := range map[string]p.InspectArtifactParams{
		"counter":    {ArtifactID: "counter", Version: 1},
		"counter@3":  {ArtifactID: "counter", Version: 3},
		"a.b_c@12":   {ArtifactID: "a.b_c", Version: 12},
		"counter@01": {ArtifactID: "counter", Version: 1},
	} {
		got, err := parseArtifactRef(ref)
		is.NoErr(err)
		is.Equal(got, want)
	}
	for _, bad := range []string{"", "@2", "counter@", "counter@0", "counter@-1", "counter@two", "a@1@2"} {
		_, err := parseArtifactRef(bad)
		is.True(err != nil) // refused
	}
}

func TestParseBindings(t *testing.T) {
	is := is.New(t)
	got, err := parseBindings([]string{"demo=demo.default", "gh=github.team"})
	is.NoErr(err)
	is.Equal(got, []binding{{"demo", "demo.default"}, {"gh", "github.team"}})
	for _, bad := range []string{"demo", "=x", "x=", ""} {
		_, err := parseBindings([]string{bad})
		is.True(err != nil) // LOGICAL=CONCRETE
	}
}

func TestAuthSaveTakesSecretsFromFilesOrStdinOnly(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	payload := dir + "/payload.json"
	is.NoErr(os.WriteFile(payload, []byte(`{"headers":{"X-Key":"s3cret"}}`), 0o600))

	params, err := (&authSave{scheme: "headers", payloadFile: payload, metadata: `{"team":"a"}`}).params("jira", nil)
	is.NoErr(err)
	is.Equal(params.Payload["headers"], map[string]any{"X-Key": "s3cret"})
	is.Equal(params.Metadata["team"], "a")
	params, err = (&authSave{scheme: "bearer", tokenFile: "-"}).params("gh", strings.NewReader("tok-123\n"))
	is.NoErr(err)
	is.Equal(params.Payload, p.Object{"token": "tok-123"}) // the final newline is not the token's

	for _, f := range []authSave{
		{payloadFile: payload}, // no scheme
		{scheme: "bearer"},     // no secret source
		{scheme: "bearer", payloadFile: payload, tokenFile: "-"}, // both
		{scheme: "headers", tokenFile: "-"},                      // a token is for bearer
		{scheme: "bearer", tokenFile: "-"},                       // an empty token
		{scheme: "bearer", payloadFile: dir + "/none"},           // no such file
	} {
		_, err := f.params("x", strings.NewReader(""))
		is.True(err != nil) // refused
	}
	// No flag takes a secret value on the command line.
	code, _, errOut := runCLI("auth", "save", "gh", "--scheme", "bearer", "--token", "tok-123", "--url", "ws://127.0.0.1:1/ws")
	is.Equal(code, ExitError) // --token is the server's bearer token, not the record's: the record's values need a file
	is.True(strings.Contains(errOut, "never as arguments"))
	is.True(!strings.Contains(errOut, "tok-123"))
	code, _, _ = runCLI("auth", "save", "gh", "--scheme", "bearer", "--payload", `{"token":"x"}`)
	is.Equal(code, ExitError) // no such flag
}

func TestExplainSaysWhatACodeMeans(t *testing.T) {
	is := is.New(t)
	code, out, _ := runCLI("explain", "missing_outcome_edge")
	is.Equal(code, ExitOK)
	info, ok := explainCode("missing_outcome_edge")
	is.True(ok)
	is.True(strings.Contains(out, info.Repair)) // the repair, as the table says it
	code, out, _ = runCLI("explain", "unreachable_step", "-o", "json")
	is.Equal(code, ExitOK)
	var got p.CodeInfo
	is.NoErr(json.Unmarshal([]byte(out), &got))
	is.Equal(got.Severity, workflow.SeverityWarning)
	code, out, _ = runCLI("explain", "-o", "json")
	is.Equal(code, ExitOK)
	var all []p.CodeInfo
	is.NoErr(json.Unmarshal([]byte(out), &all))
	is.Equal(len(all), len(workflow.DiagnosticCodes)+len(p.DependencyCodes))
	code, out, _ = runCLI("explain", "binding_missing")
	is.Equal(code, ExitOK)
	is.True(strings.Contains(out, "--bind LOGICAL=CONCRETE")) // a deployment code, explained too
	code, _, errOut := runCLI("explain", "no_such_code")
	is.Equal(code, ExitError)
	is.True(strings.Contains(errOut, "mcpflow explain")) // says where the codes are listed
}

func TestSchemaPrintsTheDocumentSchemas(t *testing.T) {
	is := is.New(t)
	for _, doc := range []string{"draft", "plan", "deployment"} {
		code, out, _ := runCLI("schema", doc)
		is.Equal(code, ExitOK)
		var s map[string]any
		is.NoErr(json.Unmarshal([]byte(out), &s))
		is.Equal(s["$schema"], "https://json-schema.org/draft/2020-12/schema")
	}
}

// TestReferenceTableNamesMcpflowCommands checks docs/cli.md's table of
// the reference CLI beside mcpflow: every mcpflow command it names is a
// command of the tree, and each of its flags is a flag of that command.
func TestReferenceTableNamesMcpflowCommands(t *testing.T) {
	is := is.New(t)
	data, err := os.ReadFile("../../../docs/cli.md")
	is.NoErr(err)
	_, section, ok := strings.Cut(string(data), "\n## Reference CLI and mcpflow\n")
	is.True(ok) // the section is there
	if next := strings.Index(section, "\n## "); next >= 0 {
		section = section[:next]
	}
	root := NewRootCommand()
	named := regexp.MustCompile("`(mcpflow [^`]+)`")
	rows := 0
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || strings.Contains(cells[2], "mcpflow |") {
			continue
		}
		for _, m := range named.FindAllStringSubmatch(strings.Join(cells[2:], "|"), -1) {
			words := strings.Fields(m[1])[1:]
			var path, flags []string
			for _, w := range words {
				switch {
				case strings.HasPrefix(w, "-"):
					flags = append(flags, strings.TrimLeft(w, "-"))
				case len(flags) == 0 && regexp.MustCompile(`^[a-z][a-z-]*$`).MatchString(w) && !strings.Contains(w, "|"):
					path = append(path, w)
				}
			}
			cmd, rest, err := root.Find(path)
			is.NoErr(err)
			if len(rest) > 0 || cmd == root && len(path) > 0 {
				// Words after the command are its arguments, which the
				// table writes in capitals: a lower-case one is a
				// command that does not exist.
				t.Logf("%q: no command %v", m[1], rest)
			}
			is.True(len(rest) == 0)
			for _, f := range flags {
				if cmd.Flag(f) == nil {
					t.Logf("%q: %s has no flag --%s", m[1], cmd.CommandPath(), f)
				}
				is.True(cmd.Flag(f) != nil) // the flag exists, its own or inherited
			}
			rows++
		}
	}
	t.Logf("%d mcpflow commands named", rows)
	is.True(rows >= 40) // the table is there, and read
}
