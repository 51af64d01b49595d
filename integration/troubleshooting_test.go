package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// troubleshootingEntry is one example of docs/cli.md's Troubleshooting
// section: a command and the error it prints.
type troubleshootingEntry struct {
	args   []string
	stderr string
}

// troubleshootingEntries reads the examples of docs/cli.md's
// Troubleshooting section: each indented block that starts with
// "$ mcpflow", its other lines what mcpflow prints on stderr.
func troubleshootingEntries(t *testing.T) []troubleshootingEntry {
	t.Helper()
	is := is.New(t)
	data, err := os.ReadFile(filepath.Join("..", "docs", "cli.md"))
	is.NoErr(err)
	_, section, ok := strings.Cut(string(data), "\n## Troubleshooting\n")
	is.True(ok) // docs/cli.md has the section
	section, _, _ = strings.Cut(section, "\n## ")
	var entries []troubleshootingEntry
	in := false
	for _, line := range strings.Split(section, "\n") {
		text, indented := strings.CutPrefix(line, "    ")
		switch {
		case !indented:
			in = false
		case strings.HasPrefix(text, "$ mcpflow "):
			entries = append(entries, troubleshootingEntry{args: strings.Fields(strings.TrimPrefix(text, "$ mcpflow "))})
			in = true
		case in:
			e := &entries[len(entries)-1]
			e.stderr += text + "\n"
		}
	}
	return entries
}

// troubleshootingConfigs are the config files the section's examples
// name, written in the folder the commands run in.
var troubleshootingConfigs = map[string]string{
	"typos.json": `{"version": 1, "server": {
 "sourcs": [],
 "sources": [{"kind": "mcp", "id": "a.default", "transport": {"kind": "stdio", "comand": "server"}}]}}
`,
	"comma.json": `{"version": 1, "server": {
 "sources": [{"kind": "mcp", "id": "a.default", "transport": {"kind": "stdio", "command": "server",}}]}}
`,
}

// TestTroubleshootingListsTheMessagesTheCLIPrints runs every example of
// docs/cli.md's Troubleshooting section against one server set up with
// what they need (a deployment visit.default on a source whose command
// is not on PATH, an invalid draft, config files with mistakes), and
// checks that each prints, word for word, the error the section shows:
// the doc cannot drift from the code.
func TestTroubleshootingListsTheMessagesTheCLIPrints(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real binary")
	}
	is := is.New(t)
	dir := t.TempDir()
	for name, content := range troubleshootingConfigs {
		is.NoErr(os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
	}
	srv := startProcess(t, writeConfig(t, dir, stdioSource("demo.default", binary, "demo-server"),
		quickToDegrade(stdioSource("pw.default", "playwrite-mcp"))), "serve.log")
	c := cliTool{t: t, url: srv.url}
	waitDegraded(t, c, "pw.default")
	c.want(0, "workflow", "new", "--from-capability", "demo.default.counter")
	c.want(0, "deploy", "--artifact", "counter_workflow", "--id", "visit.default", "--bind", "demo.default=pw.default")
	c.want(0, "draft", "create", "kv")
	c.want(0, "draft", "add", "use", "kv", "set", "demo.default.kv_set", "--route", "ok=__end__", "--route", "error=__end__")

	entries := troubleshootingEntries(t)
	is.True(len(entries) >= 10) // the audited errors
	for _, e := range entries {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := c.command(ctx, e.args...)
		cmd.Dir = dir
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		cancel()
		_, exited := err.(*exec.ExitError)
		if !exited || stderr.String() != e.stderr {
			t.Logf("mcpflow %s: %v\nprinted:\n%s\ndocs/cli.md shows:\n%s", strings.Join(e.args, " "), err, stderr.String(), e.stderr)
		}
		is.True(exited)                     // the command fails
		is.Equal(stderr.String(), e.stderr) // with the text docs/cli.md lists
	}
}
