package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

// cliResult is what one run of the mcpflow binary did.
type cliResult struct {
	args           []string
	stdout, stderr string
	code           int
}

// cliTool runs the real binary as a user would, against url (none: the
// MCPFLOW_URL of the test's environment is cleared).
type cliTool struct {
	t     *testing.T
	url   string
	env   []string
	stdin string
}

// run runs mcpflow with args and returns its output and exit code.
func (c cliTool) run(args ...string) cliResult {
	c.t.Helper()
	is := is.New(c.t)
	is.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := c.command(ctx, args...)
	cmd.Stdin = strings.NewReader(c.stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := cliResult{args: args, stdout: stdout.String(), stderr: stderr.String()}
	if exit, ok := errors.AsType[*exec.ExitError](err); ok {
		r.code = exit.ExitCode()
	} else {
		is.NoErr(err) // mcpflow ran to its end
	}
	return r
}

// command is mcpflow with args, in the tool's environment.
func (c cliTool) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, binary, args...)
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "MCPFLOW_") })
	if c.url != "" {
		env = append(env, "MCPFLOW_URL="+c.url)
	}
	cmd.Env = append(env, c.env...)
	return cmd
}

// want runs mcpflow and checks its exit code.
func (c cliTool) want(code int, args ...string) cliResult {
	c.t.Helper()
	r := c.run(args...)
	if r.code != code {
		c.t.Logf("mcpflow %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	is.New(c.t).Equal(r.code, code) // the exit code says what happened
	return r
}

// cliJSON decodes what an -o json command printed.
func cliJSON[T any](t *testing.T, r cliResult) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Logf("mcpflow %s printed:\n%s", strings.Join(r.args, " "), r.stdout)
	}
	is.New(t).NoErr(json.Unmarshal([]byte(r.stdout), &v)) // -o json prints parsable JSON
	return v
}

// cliCommands are the commands mcpflow must offer (issue 10), each of
// which --help must describe with exit 0.
var cliCommands = []string{
	"serve", "demo-server", "version", "completion", "config", "config import",
	"status", "caps", "caps list", "caps inspect", "workflow", "workflow new", "deploy", "run",
	"runs", "runs list", "runs inspect", "runs trace", "runs cancel", "runs resume", "runs rerun", "runs fork",
	"sources", "sources list", "sources diagnose", "sources login", "registry", "registry add", "registry remove", "registry apply",
	"schema", "schema methods", "schema draft", "schema plan", "schema deployment",
	"artifacts", "artifacts list", "artifacts inspect", "artifacts save", "artifacts create-from-plan", "artifacts delete",
	"deployments", "deployments list", "deployments inspect", "deployments validate", "deployments delete",
	"caps call", "runs watch", "events", "auth", "auth list", "auth inspect", "auth save", "auth delete",
	"registry inspect", "registry update", "registry enable", "registry disable",
	"sources inspect", "sources resources", "sources prompts", "explain",
}

// helpTree asks every visible command below path for --help, checks
// that each exits 0 and prints its usage, and returns their paths. The
// subcommands of a command are listed by cobra's own completion
// (`mcpflow __complete`), down to three words, asked only of a command
// whose usage says it has some (`[command]`). A leaf's completion offers
// its arguments (explain's codes, mcp config's hosts), which are not
// commands; and the binary then starts once for each command and once
// more for each parent: under -race, the starts are the test's time.
func helpTree(t *testing.T, c cliTool, path []string) []string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	r := c.want(0, append(append([]string{"__complete"}, path...), "")...)
	var found []string
	for _, line := range strings.Split(r.stdout, "\n") {
		name, _, _ := strings.Cut(line, "\t")
		if name == "" || strings.HasPrefix(name, ":") || strings.HasPrefix(name, "-") || name == "help" {
			continue
		}
		sub := append(slices.Clone(path), name)
		help := c.want(0, append(sub, "--help")...)
		is.True(strings.Contains(help.stdout, "Usage:")) // --help prints the usage
		found = append(found, strings.Join(sub, " "))
		if len(sub) < 3 && strings.Contains(help.stdout, strings.Join(sub, " ")+" [command]") {
			found = append(found, helpTree(t, c, sub)...)
		}
	}
	return found
}

// TestCLIHelpExitsZeroForEveryCommand asks every command the binary
// offers, found by walking its completion, for --help: each exits 0 and
// describes itself; the root's help lists the exit codes.
func TestCLIHelpExitsZeroForEveryCommand(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	c := cliTool{t: t}
	found := helpTree(t, c, nil)
	t.Logf("%d commands: %s", len(found), strings.Join(found, ", "))
	for _, want := range cliCommands {
		if !slices.Contains(found, want) {
			t.Logf("command %q not offered", want)
		}
		is.True(slices.Contains(found, want)) // every command of the issue is there
	}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {"help", "runs", "resume"}, {}} {
		r := c.want(0, args...)
		is.True(strings.Contains(r.stdout, "Usage:"))
	}
	root := c.want(0, "--help")
	is.True(strings.Contains(root.stdout, "Exit codes:"))
	is.True(strings.Contains(root.stdout, "3  the run is interrupted"))
	is.True(!strings.Contains(root.stdout, " reap")) // the reaper stays hidden
	bash := c.want(0, "completion", "bash")
	is.True(strings.Contains(bash.stdout, "__start_mcpflow")) // a bash completion script
}

// TestCLIVersionShowsTheGoVersion checks `mcpflow version`, its -o json
// and --version.
func TestCLIVersionShowsTheGoVersion(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	c := cliTool{t: t}
	r := c.want(0, "version")
	is.True(strings.Contains(r.stdout, runtime.Version())) // the Go version the binary was built with
	v := cliJSON[map[string]any](t, c.want(0, "version", "-o", "json"))
	is.Equal(v["go"], runtime.Version())
	is.True(v["version"] != "")
	short := c.want(0, "--version")
	is.True(strings.HasPrefix(short.stdout, "mcpflow "))
	is.True(strings.Contains(short.stdout, runtime.Version()))
}

// TestCLIBadUsageExitsOne checks that usage errors exit 1 and say where
// the usage is.
func TestCLIBadUsageExitsOne(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	c := cliTool{t: t, url: "ws://127.0.0.1:1/ws"} // never dialled: usage is checked first
	for _, args := range [][]string{
		{"bogus"},
		{"caps", "bogus"},
		{"runs", "inspect"},
		{"run"},
		{"serve", "--bogus"},
		{"status", "extra"},
		{"workflow", "new"},
		{"--bogus"},
	} {
		r := c.want(1, args...)
		is.True(strings.Contains(r.stderr, "--help' for usage")) // points at the help
	}
	for _, args := range [][]string{
		{"status", "-o", "yaml"},
		{"run", "x", "--input", "not json"},
		{"deploy"},
		{"deploy", "--artifact", "a", "--bind", "nobinding"},
		{"serve", "--log-format", "xml", "--listen", "127.0.0.1:0"},
	} {
		r := c.want(1, args...)
		is.True(strings.HasPrefix(r.stderr, "mcpflow: ")) // one line saying what is wrong
	}
}

// TestCLIUnreachableOrRefusedExitsFour checks exit 4 for a server that is
// not there and for one that refuses the client (-32001, -32003), and that
// no token shows in any output.
func TestCLIUnreachableOrRefusedExitsFour(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	down := cliTool{t: t, url: "ws://" + freeAddr(t) + "/ws?key=url-secret-value", env: []string{"MCPFLOW_TOKEN=" + adminToken.Token}}
	r := down.want(4, "status")
	is.True(strings.Contains(r.stderr, "connect to"))
	is.True(!strings.Contains(r.stderr, "url-secret-value")) // the URL's query is not shown
	is.True(!strings.Contains(r.stderr, adminToken.Token))   // nor the token

	s := startGuarded(t)
	noToken := cliTool{t: t, url: s.URL}
	r = noToken.want(4, "status") // -32001: no token
	is.True(strings.Contains(r.stderr, "-32001"))
	wrong := cliTool{t: t, url: s.URL, env: []string{"MCPFLOW_TOKEN=not-a-configured-token-at-all"}}
	wrong.want(4, "caps", "list")
	reader := cliTool{t: t, url: s.URL}
	r = reader.want(4, "registry", "apply", "--token", readToken.Token) // -32003: outside its scopes
	is.True(strings.Contains(r.stderr, "-32003"))
	admin := cliTool{t: t, url: s.URL, env: []string{"MCPFLOW_TOKEN=" + adminToken.Token}}
	ok := admin.want(0, "status")
	for _, out := range []string{r.stdout, r.stderr, ok.stdout, ok.stderr} {
		is.True(!strings.Contains(out, readToken.Token) && !strings.Contains(out, adminToken.Token)) // no token in any output
	}
}

// askDraft waits for approval, then ends.
const askDraft = `{"name":"ask","start":"ask","outcomes":["ok"],
	"state_schema":{"type":"object","properties":{"approved":{"type":"boolean"}}},
	"output_schema":{"type":"object","properties":{"approved":{}}},
	"steps":{"ask":{"interrupt":{"kind":"approval","request":[{"target":"message","value":"Ship it?"}],
		"resume":[{"source":"approved","target":"state.approved"}],
		"resume_schema":{"type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"]}}}},
	"routes":{"ask":{"submitted":"__end__"}}}`

// TestCLICommandsAgainstARealServer drives every client command of the
// real binary against a real `mcpflow serve` with the demo source and a
// fake MCP server: tables, -o json, and the exit codes of runs that
// complete (0), fail (2) and wait at an interrupt (3).
func TestCLICommandsAgainstARealServer(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("starts the real binary")
	}
	is := is.New(t)
	dir := t.TempDir()
	cfgPath := writeConfig(t, dir, stdioSource("demo.default", binary, "demo-server"), stdioSource("fake.a", fakeMCP))
	srv := startProcess(t, cfgPath, "serve.log", "--run-wait", "30s")
	c := cliTool{t: t, url: srv.url}

	// status: both connections, with their sessions.
	r := c.want(0, "status")
	is.True(strings.Contains(r.stdout, "demo.default"))
	is.True(strings.Contains(r.stdout, "server: ok"))
	st := cliJSON[struct {
		Health      p.HealthResult                 `json:"health"`
		Connections p.ListConnectionStatusesResult `json:"connections"`
	}](t, c.want(0, "status", "-o", "json"))
	is.Equal(st.Health.Status, "ok")
	is.Equal(st.Connections.Total, 2)

	// caps: the demo's tools.
	r = c.want(0, "caps", "list", "--source", "demo.default")
	is.True(strings.Contains(r.stdout, "demo.default.counter"))
	caps := cliJSON[p.ListCapabilitiesResult](t, c.want(0, "caps", "list", "--source", "demo.default", "-o", "json"))
	is.True(slices.ContainsFunc(caps.Capabilities, func(cp p.CapabilitySummary) bool { return cp.Name == "demo.default.counter" }))
	r = c.want(0, "caps", "inspect", "demo.default.counter")
	is.True(strings.Contains(r.stdout, "outcomes:"))
	detail := cliJSON[p.CapabilityDetail](t, c.want(0, "caps", "inspect", "demo.default.counter", "-o", "json"))
	is.Equal(detail.SourceID, "demo.default")
	c.want(1, "caps", "inspect", "demo.default.nothing") // a domain error

	// workflow new, then run it twice on the one session: 1, then 2.
	r = c.want(0, "workflow", "new", "--from-capability", "demo.default.counter")
	is.True(strings.Contains(r.stdout, "counter_workflow.default"))
	r = c.want(0, "run", "counter_workflow.default", "--follow")
	is.True(strings.Contains(r.stdout, "completed"))
	is.True(strings.Contains(r.stdout, `"count": 1`)) // the live view ends with the output
	run := cliJSON[p.RunResult](t, c.want(0, "run", "counter_workflow.default", "-o", "json"))
	is.Equal(run.Status, "completed")
	is.Equal(run.Output["count"], float64(2)) // the same upstream session
	counterRun := *run.RunID

	// A failing tool fails the run: exit 2, with the run as JSON.
	made := cliJSON[map[string]json.RawMessage](t, c.want(0, "workflow", "new", "--from-capability", "fake.a.fail",
		"--workspace-id", "f_ws", "--artifact-id", "f", "--deployment-id", "f.one", "-o", "json"))
	is.True(len(made["workspace"]) > 0 && len(made["artifact"]) > 0)
	deployed := cliJSON[p.SaveDeploymentResult](t, cliResult{stdout: string(made["deployment"])})
	is.Equal(deployed.DeploymentID, "f.one")
	r = c.want(2, "run", "f.one", "--wait", "-o", "json")
	failed := cliJSON[p.RunResult](t, r)
	is.Equal(failed.Status, "failed")
	is.True(strings.Contains(r.stderr, "failed"))
	c.want(2, "run", "f.one", "--follow")
	c.want(2, "run", "f.one")

	// deploy: from a file, from stdin and from flags.
	file := filepath.Join(dir, "deployment.json")
	is.NoErr(os.WriteFile(file, []byte(`{"id":"counter.file","artifact_id":"counter_workflow","artifact_version":1,
		"bindings":[{"logical_source":"demo.default","concrete_source":"demo.default"}]}`), 0o600))
	dep := cliJSON[p.SaveDeploymentResult](t, c.want(0, "deploy", file, "-o", "json"))
	is.Equal(dep.DeploymentID, "counter.file")
	stdin := c
	stdin.stdin = `{"id":"counter.stdin","artifact_id":"counter_workflow","artifact_version":1,"bindings":[{"logical_source":"demo.default","concrete_source":"demo.default"}]}`
	is.True(strings.Contains(stdin.want(0, "deploy", "-").stdout, "counter.stdin"))
	r = c.want(0, "deploy", "--artifact", "counter_workflow", "--bind", "demo.default=demo.default")
	is.True(strings.Contains(r.stdout, "counter_workflow.default"))
	withInput := cliJSON[p.RunResult](t, c.want(0, "run", "counter.file", "--input", "{}", "--wait", "-o", "json"))
	is.Equal(withInput.Output["count"], float64(3))
	r = c.want(0, "run", "counter.file", "--follow", "-o", "json")
	followed := cliJSON[p.RunResult](t, r)
	is.Equal(followed.Output["count"], float64(4))
	is.True(strings.Contains(r.stderr, "call: ok")) // with -o json the live view goes to stderr

	// An interrupt: exit 3, then resume (0) or cancel.
	cl := dialURL(t, srv.url)
	saveDraft(t, cl, "ask", askDraft)
	c.want(0, "deploy", "--artifact", "ask")
	r = c.want(3, "run", "ask.default", "-o", "json")
	asked := cliJSON[p.RunResult](t, r)
	is.Equal(asked.Status, "interrupted")
	is.True(strings.Contains(r.stderr, "mcpflow runs resume "+*asked.RunID))
	c.want(3, "run", "ask.default", "--follow")
	r = c.want(1, "runs", "resume", *asked.RunID, "--payload", `{"approved":"yes"}`) // refused, and it changes nothing
	is.True(strings.Contains(r.stderr, "resume refused"))
	payload := c
	payload.stdin = `{"approved": true}`
	resumed := cliJSON[p.RunResult](t, payload.want(0, "runs", "resume", *asked.RunID, "--payload", "@-", "-o", "json"))
	is.Equal(resumed.Status, "completed")
	is.Equal(resumed.Output["approved"], true)
	again := cliJSON[p.RunResult](t, c.want(3, "run", "ask.default", "--wait", "-o", "json"))
	r = c.want(0, "runs", "cancel", *again.RunID, "--reason", "not today")
	is.True(strings.Contains(r.stdout, "cancelled"))
	cancelled := cliJSON[p.RunResult](t, c.want(0, "runs", "inspect", *again.RunID, "-o", "json"))
	is.Equal(cancelled.Status, "cancelled")

	// runs list, inspect and trace.
	r = c.want(0, "runs", "list")
	is.True(strings.Contains(r.stdout, counterRun))
	list := cliJSON[p.ListRunsResult](t, c.want(0, "runs", "list", "--status", "failed", "-o", "json"))
	is.True(len(list.Runs) >= 3)
	is.True(!slices.ContainsFunc(list.Runs, func(s p.RunSummary) bool { return s.Status != "failed" }))
	r = c.want(0, "runs", "inspect", counterRun)
	is.True(strings.Contains(r.stdout, "completed"))
	r = c.want(0, "runs", "trace", counterRun)
	is.True(strings.Contains(r.stdout, "call"))
	trace := cliJSON[p.RunResult](t, c.want(0, "runs", "trace", counterRun, "--limit", "5", "-o", "json"))
	is.Equal(len(trace.Trace), 1)
	is.Equal(trace.Trace[0].NodeID, "call")

	// sources.
	r = c.want(0, "sources", "list")
	is.True(strings.Contains(r.stdout, "fake.a"))
	sources := cliJSON[p.ListSourcesResult](t, c.want(0, "sources", "list", "-o", "json"))
	is.True(slices.ContainsFunc(sources.Sources, func(s p.SourceStatus) bool { return s.ID == "demo.default" }))
	r = c.want(0, "sources", "diagnose", "fake.a")
	is.True(strings.Contains(r.stdout, "status:"))
	diag := cliJSON[p.SourceDiagnosis](t, c.want(0, "sources", "diagnose", "fake.a", "-o", "json"))
	is.Equal(diag.SourceID, "fake.a")

	// registry: add a source, apply, see it, remove it, apply.
	entry := filepath.Join(dir, "entry.json")
	data, err := json.Marshal(p.Object{"id": "fake.b", "transport": config.Transport{Kind: config.TransportStdio, Command: fakeMCP}})
	is.NoErr(err)
	is.NoErr(os.WriteFile(entry, data, 0o600))
	r = c.want(0, "registry", "add", entry)
	is.True(strings.Contains(r.stdout, "fake.b"))
	applied := cliJSON[p.ApplyRegistryChangesResult](t, c.want(0, "registry", "apply", "-o", "json"))
	is.Equal(applied.Registered, []string{"fake.b"})
	r = c.want(0, "registry", "list")
	is.True(strings.Contains(r.stdout, "fake.b"))
	entries := cliJSON[p.ListRegistryEntriesResult](t, c.want(0, "registry", "list", "-o", "json"))
	is.Equal(entries.Total, 1)
	removed := cliJSON[p.RemoveRegistryEntryResult](t, c.want(0, "registry", "remove", "fake.b", "-o", "json"))
	is.True(removed.Removed)
	r = c.want(0, "registry", "apply")
	is.True(strings.Contains(r.stdout, "fake.b"))

	// schema methods: the method table.
	r = c.want(0, "schema", "methods")
	is.True(strings.Contains(r.stdout, "workflow.runs.cancel"))
	type method struct {
		Name      string `json:"name"`
		Extension bool   `json:"x-mcpflow-extension"`
	}
	doc := cliJSON[struct {
		Methods []method `json:"methods"`
	}](t, c.want(0, "schema", "methods", "-o", "json"))
	is.True(slices.Contains(doc.Methods, method{Name: p.MethodRunsCancel, Extension: true})) // extensions are marked

	// --url beats MCPFLOW_URL.
	elsewhere := cliTool{t: t, url: "ws://" + freeAddr(t) + "/ws"}
	elsewhere.want(4, "status")
	elsewhere.want(0, "status", "--url", srv.url)
}
