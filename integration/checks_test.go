package integration

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// quickToDegrade makes a source degrade after its second failed start,
// and leaves it degraded for the test's length (no probe meanwhile).
func quickToDegrade(c config.Connection) config.Connection {
	one := 1
	c.Supervision = &config.Supervision{MinBackoffMS: 20, MaxBackoffMS: 50, MaxRestarts: &one, RestartWindowMS: 60_000, ProbeIntervalMS: 600_000}
	return c
}

// flat is s with its whitespace runs made single spaces: a wrapped
// message reads as one line.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

// waitDegraded waits until status shows every one of ids degraded.
func waitDegraded(t *testing.T, c cliTool, ids ...string) {
	t.Helper()
	poll.For(t, strings.Join(ids, ", ")+" degraded", 30*time.Second, func() bool {
		st := cliJSON[struct {
			Connections p.ListConnectionStatusesResult `json:"connections"`
		}](t, c.want(0, "status", "-o", "json"))
		for _, id := range ids {
			if !slices.ContainsFunc(st.Connections.Statuses, func(s p.ConnectionStatus) bool {
				return s.ConnectionID == id && s.Session.State == "degraded"
			}) {
				return false
			}
		}
		return true
	})
}

// TestChecksTellTheLiveTruthOfAFailingSource is issue 29's first finding:
// a source whose command does not exist, and HTTP sources that refuse,
// want a login (401) or are not there (404). sources diagnose and inspect
// say status error with the live state and the cause in a user's words;
// deployments validate says a deployment on the failing source is not
// runnable now, naming it; status, /readyz and workflow.health say the
// server is degraded, status with the whole cause; caps call on the
// failing source says it is down rather than "unknown workflow
// capability"; sources list counts a connection's tools as tools.
func TestChecksTellTheLiveTruthOfAFailingSource(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("starts the real binary")
	}
	is := is.New(t)
	dir := t.TempDir()
	unauthorized := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no token", http.StatusUnauthorized)
	}))
	t.Cleanup(unauthorized.Close)
	missing := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(missing.Close)
	notExecutable := filepath.Join(dir, "server.sh")
	is.NoErr(os.WriteFile(notExecutable, []byte("#!/bin/sh\n"), 0o600))
	cfg := writeConfig(t, dir, stdioSource("demo.default", binary, "demo-server"),
		quickToDegrade(stdioSource("pw.default", "playwrite-mcp")),
		quickToDegrade(stdioSource("node.crash", "sh", "-c", "echo \"Error: Cannot find module 'x'\" >&2; exit 1")),
		quickToDegrade(stdioSource("sh.noexec", notExecutable)),
		quickToDegrade(httpSource("web.refused", freeAddr(t))),
		quickToDegrade(httpSource("web.auth", strings.TrimPrefix(unauthorized.URL, "http://"))),
		quickToDegrade(httpSource("web.missing", strings.TrimPrefix(missing.URL, "http://"))))
	srv := startProcess(t, cfg, "serve.log")
	c := cliTool{t: t, url: srv.url}
	waitDegraded(t, c, "pw.default", "node.crash", "sh.noexec", "web.refused", "web.auth", "web.missing")

	// diagnose and inspect: status error, the session's state and cause.
	for id, cause := range map[string]string{
		"pw.default":  "the command `playwrite-mcp` was not found on PATH",
		"node.crash":  "the server process exited at start (exit status 1); its stderr ended with: Error: Cannot find module 'x'",
		"sh.noexec":   "the command `" + notExecutable + "` could not be started: permission denied",
		"web.refused": "the server refused the connection",
		"web.auth":    "the server answered 401 Unauthorized",
		"web.missing": "the server answered 404 Not Found",
	} {
		t.Run(id, func(t *testing.T) {
			is, c := is.New(t), cliTool{t: t, url: srv.url}
			d := cliJSON[p.SourceDiagnosis](t, c.want(0, "sources", "diagnose", id, "-o", "json"))
			is.Equal(d.Status, "error") // not "ok" for a source that fails
			is.True(d.Session != nil && d.Session.State == "degraded" && d.Session.Failing)
			is.True(d.Session.Cause != nil)
			t.Logf("cause: %s", *d.Session.Cause)              // shown when it fails
			is.True(strings.Contains(*d.Session.Cause, cause)) // the cause in a user's words
			is.True(slices.ContainsFunc(d.Diagnostics, func(x p.DependencyDiag) bool { return x.Code == "source_degraded" }))
			r := c.want(0, "sources", "diagnose", id)
			is.True(strings.Contains(flat(r.stdout), cause)) // the table says it whole
			in := cliJSON[p.InspectSourceResult](t, c.want(0, "sources", "inspect", id, "-o", "json"))
			is.Equal(in.Diagnostics.Status, "error")
		})
	}

	// deployments validate: not runnable now, naming the source and its state.
	c.want(0, "workflow", "new", "--from-capability", "demo.default.counter")
	c.want(0, "deploy", "--artifact", "counter_workflow", "--id", "visit.default", "--bind", "demo.default=pw.default")
	v := cliJSON[p.ValidateDeploymentResult](t, c.want(1, "deployments", "validate", "visit.default", "-o", "json"))
	is.Equal(v.Status, "unrunnable")
	is.True(slices.ContainsFunc(v.Diagnostics, func(x p.DependencyDiag) bool {
		return x.Code == "source_degraded" && x.BoundSource != nil && *x.BoundSource == "pw.default" && strings.Contains(x.Message, "degraded")
	}))
	r := c.want(1, "deployments", "validate", "visit.default")
	is.True(strings.Contains(flat(r.stdout), `source "pw.default" is degraded`))
	ok := cliJSON[p.ValidateDeploymentResult](t, c.want(0, "deployments", "validate", "counter_workflow.default", "-o", "json"))
	is.Equal(ok.Status, "runnable") // a deployment on a working source still is

	// status: degraded, with each cause first and whole.
	r = c.want(0, "status")
	is.True(strings.HasPrefix(r.stdout, "server: degraded (6 of 7 sources failing)"))
	is.True(!strings.Contains(r.stdout, "server: ok"))
	is.True(strings.Contains(flat(r.stdout), "pw.default is degraded: the command `playwrite-mcp` was not found on PATH: install it, or give the full path as the source's transport.command"))
	is.True(!strings.Contains(r.stdout, "mcpflow reap")) // no internals
	st := cliJSON[struct {
		Health p.HealthResult `json:"health"`
	}](t, c.want(0, "status", "-o", "json"))
	is.Equal(st.Health.Status, "ok") // the manifest's const: the server answers
	is.True(st.Health.Sources != nil)
	is.Equal(st.Health.Sources.Status, "degraded") // what the console's Health badge reads
	is.Equal(st.Health.Sources.Failing, 6)
	is.Equal(st.Health.Sources.Total, 7)

	// /readyz: ready (the other sources serve), with the per-source detail.
	resp, err := http.Get("http://" + strings.TrimSuffix(strings.TrimPrefix(srv.url, "ws://"), "/ws") + "/readyz")
	is.NoErr(err)
	body, err := io.ReadAll(resp.Body)
	is.NoErr(err)
	is.NoErr(resp.Body.Close())
	is.Equal(resp.StatusCode, http.StatusOK)
	var ready struct {
		Status  string `json:"status"`
		Sources struct {
			Status  string `json:"status"`
			Failing int    `json:"failing"`
			Detail  []struct {
				SourceID string `json:"source_id"`
				State    string `json:"state"`
			} `json:"detail"`
		} `json:"sources"`
	}
	is.NoErr(json.Unmarshal(body, &ready))
	is.Equal(ready.Status, "ready")
	is.Equal(ready.Sources.Status, "degraded")
	is.Equal(ready.Sources.Failing, 6)
	is.True(slices.ContainsFunc(ready.Sources.Detail, func(d struct {
		SourceID string `json:"source_id"`
		State    string `json:"state"`
	}) bool {
		return d.SourceID == "pw.default" && d.State == "degraded"
	}))
	is.True(!strings.Contains(string(body), "playwrite")) // no cause on the unauthenticated probe

	// caps call on the failing source says it is down.
	r = c.want(1, "caps", "call", "pw.default.navigate", "--input", "{}")
	is.True(strings.Contains(r.stderr, `source "pw.default" is down (degraded): the command `+"`playwrite-mcp`"+` was not found on PATH`))
	is.True(!strings.Contains(r.stderr, "unknown workflow capability"))

	// sources list counts the demo's 4 tools as tools.
	sources := cliJSON[p.ListSourcesResult](t, c.want(0, "sources", "list", "-o", "json"))
	demo := sources.Sources[slices.IndexFunc(sources.Sources, func(s p.SourceStatus) bool { return s.ID == "demo.default" })]
	is.Equal(demo.ToolCount, 4)
	is.True(strings.Contains(c.want(0, "sources", "list").stdout, "demo.default  connection  yes      4"))
}

// demoCLI is the CLI of a real mcpflow serving the demo source.
func demoCLI(t *testing.T) cliTool {
	t.Helper()
	srv := startProcess(t, writeConfig(t, t.TempDir(), stdioSource("demo.default", binary, "demo-server")), "serve.log")
	return cliTool{t: t, url: srv.url}
}

// TestCLIErrorsSayHowToRepair is issue 29's third group of findings: no
// JSON-RPC preamble (-o json keeps the code), unknown ids suggest the
// nearest one, a refused connection says how to start the server.
func TestCLIErrorsSayHowToRepair(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("starts the real binary")
	}
	is := is.New(t)
	c := demoCLI(t)
	c.want(0, "workflow", "new", "--from-capability", "demo.default.counter", "--deployment-id", "visit.default")

	r := c.want(1, "deployments", "inspect", "visit")
	is.Equal(r.stderr, "mcpflow: unknown deployment \"visit\"; did you mean \"visit.default\"?\n")
	r = c.want(1, "deployments", "inspect", "visit", "-o", "json")
	is.True(strings.Contains(r.stderr, "jsonrpc 5000")) // scripts keep the code
	r = c.want(1, "run", "visit")
	is.True(strings.Contains(r.stderr, `did you mean "visit.default"?`))
	r = c.want(1, "caps", "inspect", "demo.default.countr")
	is.Equal(r.stderr, "mcpflow: unknown workflow capability \"demo.default.countr\"; did you mean \"demo.default.counter\"?\n")
	r = c.want(1, "sources", "diagnose", "demo")
	is.True(strings.Contains(r.stderr, `did you mean "demo.default"?`))
	r = c.want(1, "artifacts", "inspect", "counter_workflw@1")
	is.True(strings.Contains(r.stderr, `did you mean "counter_workflow"?`))
	run := cliJSON[p.RunResult](t, c.want(0, "run", "visit.default", "-o", "json"))
	r = c.want(1, "runs", "inspect", (*run.RunID)[:10])
	is.True(strings.Contains(r.stderr, `did you mean "`+*run.RunID+`"?`))
	for _, out := range []string{r.stderr} {
		is.True(!strings.Contains(out, "jsonrpc")) // no preamble for people
	}

	down := cliTool{t: t, url: "ws://" + freeAddr(t) + "/ws"}
	r = down.want(4, "status")
	is.True(strings.Contains(r.stderr, "start one with `mcpflow serve` (from a clone: `go run ./cmd/mcpflow serve`)"))
	is.True(strings.Contains(r.stderr, down.url)) // the URL it tried
}

// TestRunsListShowsRunningRunsAndRunDetaches is issue 29's fourth group:
// runs.list filters by running and by deployment, run --detach answers
// with the run's id at once, runs list shows start, duration and who.
func TestRunsListShowsRunningRunsAndRunDetaches(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("starts the real binary")
	}
	is := is.New(t)
	srv := startProcess(t, writeConfig(t, t.TempDir(), stdioSource("fake.a", fakeMCP), stdioSource("demo.default", binary, "demo-server")), "serve.log")
	c := cliTool{t: t, url: srv.url}
	c.want(0, "workflow", "new", "--from-capability", "fake.a.sleep")
	c.want(0, "workflow", "new", "--from-capability", "demo.default.counter")
	c.want(0, "run", "counter_workflow.default", "--wait")

	r := c.want(0, "run", "sleep_workflow.default", "--detach", "--input", `{"ms":60000}`)
	is.True(strings.HasPrefix(r.stdout, "run run_"))
	runID := strings.Fields(strings.TrimPrefix(r.stdout, "run "))[0]
	runID = strings.TrimSuffix(runID, ":")
	is.True(strings.Contains(r.stdout, "mcpflow runs watch "+runID))

	running := cliJSON[p.ListRunsResult](t, c.want(0, "runs", "list", "--status", "running", "-o", "json"))
	is.Equal(len(running.Runs), 1)
	is.Equal(running.Runs[0].RunID, runID)
	is.Equal(running.Runs[0].StartedBy, "local")
	mine := cliJSON[p.ListRunsResult](t, c.want(0, "runs", "list", "--deployment", "counter_workflow.default", "-o", "json"))
	is.Equal(len(mine.Runs), 1)
	is.Equal(mine.Runs[0].DeploymentID, "counter_workflow.default")
	r = c.want(0, "runs", "list")
	is.True(strings.Contains(r.stdout, "STARTED"))
	is.True(strings.Contains(r.stdout, "DURATION"))
	is.True(strings.Contains(r.stdout, "STARTED BY"))
	is.True(strings.Contains(r.stdout, "local"))

	help := c.want(0, "run", "--help")
	is.True(strings.Contains(help.stdout, "--detach"))
	is.True(!strings.Contains(help.stdout, "--run-wait")) // a server flag the CLI does not take
	c.want(0, "runs", "cancel", runID)
}

// TestValidationCatchesAnUnboundRequiredInputAndAPathTypo is issue 29's
// second group: a required step input left unbound is an error at draft
// validate (with a code, a repair hint and the path to bind); a typo in
// an input path that adds a field to the workflow's input is a warning
// shown by the edit that made it.
func TestValidationCatchesAnUnboundRequiredInputAndAPathTypo(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("starts the real binary")
	}
	is := is.New(t)
	c := demoCLI(t)

	c.want(0, "draft", "create", "kv")
	c.want(0, "draft", "contract", "set", "kv", "--input-schema", `{"type":"object","properties":{"key":{"type":"string"}}}`)
	r := c.want(0, "draft", "add", "use", "kv", "set", "demo.default.kv_set", "--route", "ok=__end__", "--route", "error=__end__")
	is.True(strings.Contains(r.stdout, "required_input_unbound"))
	r = c.want(1, "draft", "validate", "kv")
	is.True(strings.Contains(flat(r.stdout), `step "set" does not fill "key", which demo.default.kv_set requires: the call would be refused at run time; did you mean to bind input.key (--in key=input.key)?`))
	ws := cliJSON[p.WorkspaceResult](t, c.want(1, "draft", "validate", "kv", "-o", "json"))
	d := ws.Diagnostics[slices.IndexFunc(ws.Diagnostics, func(d p.Diagnostic) bool { return d.Code == "required_input_unbound" })]
	is.True(d.IsError())
	is.True(d.RepairHint != nil && strings.Contains(*d.RepairHint, "mcpflow draft bind")) // how to repair it
	r = c.want(0, "draft", "bind", "kv", "set", "input.key", "local.key")
	is.True(!strings.Contains(r.stdout, "required_input_unbound"))
	r = c.want(0, "draft", "validate", "kv")
	is.True(strings.Contains(r.stdout, "error_routed_to_end")) // set's error goes to __end__: a warning, which does not fail validate

	// The typo: input.ky adds "ky" to the input; the edit says so.
	c.want(0, "draft", "create", "typo")
	r = c.want(0, "draft", "add", "use", "typo", "set", "demo.default.kv_set", "--in", "key=input.ky", "--route", "ok=__end__", "--route", "error=__end__")
	is.True(strings.Contains(flat(r.stdout), `input.ky added the field "ky" to the workflow's input schema; did you mean input.key?`))
	edited := cliJSON[p.DraftEditResult](t, c.want(0, "draft", "bind", "typo", "set", "state.vaule", "local.value", "-o", "json"))
	is.True(slices.ContainsFunc(edited.Diagnostics, func(d p.Diagnostic) bool {
		return d.Code == "input_path_typo" && !d.IsError() && strings.Contains(d.Message, "did you mean state.value?")
	}))
	r = c.want(0, "draft", "validate", "typo")
	is.True(!strings.Contains(r.stdout, "input_path_typo")) // the edit's warning, not the document's
}
