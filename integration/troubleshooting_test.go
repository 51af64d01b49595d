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
	t.Parallel() // its own mcpflow: see parallelTests
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

	entries := docCommands(t, "docs/cli.md", "Troubleshooting", "mcpflow")
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
		want := strings.Join(e.output, "\n") + "\n"
		if !exited || stderr.String() != want {
			t.Logf("mcpflow %s: %v\nprinted:\n%s\ndocs/cli.md shows:\n%s", strings.Join(e.args, " "), err, stderr.String(), want)
		}
		is.True(exited)                 // the command fails
		is.Equal(stderr.String(), want) // with the text docs/cli.md lists
	}
}
