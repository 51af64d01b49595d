package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/workflow"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes"
)

// TestCLIRestOfTheAPIAgainstARealServer drives the commands of issue 20
// item 2 (artifacts, deployments, caps call, runs watch, events, auth,
// registry, sources, explain, schema, and the completion of ids) with the
// real binary against a real `mcpflow serve`: each command's table and
// its -o json.
func TestCLIRestOfTheAPIAgainstARealServer(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("starts the real binary")
	}
	is := is.New(t)
	dir := t.TempDir()
	cfgPath := writeConfig(t, dir, stdioSource("demo.default", binary, "demo-server"), stdioSource("fake.a", fakeMCP))
	srv := startProcess(t, cfgPath, "serve.log", "--run-wait", "30s")
	c := cliTool{t: t, url: srv.url}
	withStdin := func(in string) cliTool { s := c; s.stdin = in; return s }
	write := func(name string, v any) string {
		data, err := json.Marshal(v)
		is.NoErr(err)
		path := filepath.Join(dir, name)
		is.NoErr(os.WriteFile(path, data, 0o600))
		return path
	}
	c.want(0, "workflow", "new", "--from-capability", "demo.default.counter")

	// artifacts: list, inspect, save, create-from-plan, delete.
	r := c.want(0, "artifacts", "list")
	is.True(strings.Contains(r.stdout, "counter_workflow"))
	arts := cliJSON[p.ListArtifactsResult](t, c.want(0, "artifacts", "list", "--query", "counter", "-o", "json"))
	is.True(slices.ContainsFunc(arts.Nodes, func(a p.ArtifactEntry) bool { return a.ArtifactID == "counter_workflow" && a.Version == 1 }))
	r = c.want(0, "artifacts", "inspect", "counter_workflow")
	is.True(strings.Contains(r.stdout, "counter_workflow v1"))
	is.True(strings.Contains(r.stdout, "demo.default.counter")) // what it requires
	art := cliJSON[p.Artifact](t, c.want(0, "artifacts", "inspect", "counter_workflow@1", "-o", "json"))
	is.Equal(planOf(t, art.Plan).Start, "call")
	art.Version = 2
	saved := cliJSON[p.SaveArtifactResult](t, c.want(0, "artifacts", "save", write("artifact.json", art), "-o", "json"))
	is.Equal(saved, p.SaveArtifactResult{ArtifactID: "counter_workflow", Version: 2, Saved: true})
	art.Version = 3
	data, err := json.Marshal(art)
	is.NoErr(err)
	r = withStdin(string(data)).want(0, "artifacts", "save", "-")
	is.True(strings.Contains(r.stdout, "counter_workflow v3"))
	plan := write("plan.json", art.Plan)
	r = c.want(0, "artifacts", "create-from-plan", plan, "--id", "planned", "--bind", "demo.default=demo.default")
	is.True(strings.Contains(r.stdout, "planned v1"))
	fromPlan := cliJSON[p.SaveArtifactResult](t, c.want(0, "artifacts", "create-from-plan", plan, "--id", "planned", "--version", "2", "-o", "json"))
	is.True(fromPlan.Saved)
	c.want(1, "artifacts", "create-from-plan", plan) // --id is required
	deleted := cliJSON[p.DeleteArtifactResult](t, c.want(0, "artifacts", "delete", "planned@2", "-o", "json"))
	is.True(deleted.Deleted)
	r = c.want(0, "artifacts", "delete", "counter_workflow")
	is.True(strings.Contains(r.stdout, "counter_workflow.default")) // a deployment uses it: not deleted
	c.want(1, "artifacts", "inspect", "planned@2")                  // gone
	c.want(1, "artifacts", "inspect", "planned@x")                  // a bad version is a usage error

	// deployments: list, inspect, validate, delete.
	c.want(0, "deploy", "--artifact", "counter_workflow", "--version", "2", "--id", "counter.two", "--bind", "demo.default=demo.default")
	r = c.want(0, "deployments", "list")
	is.True(strings.Contains(r.stdout, "counter_workflow v2"))
	deps := cliJSON[p.ListDeploymentsResult](t, c.want(0, "deployments", "list", "-o", "json"))
	is.Equal(len(deps.Deployments), 2)
	r = c.want(0, "deployments", "inspect", "counter.two")
	is.True(strings.Contains(r.stdout, "demo.default"))
	dep := cliJSON[p.Deployment](t, c.want(0, "deployments", "inspect", "counter.two", "-o", "json"))
	is.Equal(dep.ArtifactVersion, 2)
	r = c.want(0, "deployments", "validate", "counter.two")
	is.True(strings.Contains(r.stdout, "runnable"))
	valid := cliJSON[p.ValidateDeploymentResult](t, c.want(0, "deployments", "validate", "counter.two", "--live-check", "-o", "json"))
	is.Equal(valid.Status, "runnable")
	c.want(0, "deploy", "--artifact", "counter_workflow", "--version", "3", "--id", "counter.three", "--bind", "demo.default=demo.default")
	r = c.want(0, "deployments", "delete", "counter.two")
	is.True(strings.Contains(r.stdout, "deleted:"))
	gone := cliJSON[p.DeleteDeploymentResult](t, c.want(0, "deployments", "delete", "counter.three", "-o", "json"))
	is.True(gone.Deleted)
	c.want(1, "deployments", "inspect", "counter.two") // gone

	// caps call.
	r = c.want(0, "caps", "call", "fake.a.echo", "--input", `{"message":"hi there"}`)
	is.True(strings.Contains(r.stdout, "hi there"))
	call := cliJSON[p.CapabilityCallResult](t, withStdin(`{"message":"from stdin"}`).want(0, "caps", "call", "fake.a.echo", "--input", "@-", "-o", "json"))
	is.Equal(call.Outcome, "ok")
	is.Equal(call.Output["message"], "from stdin")
	failed := cliJSON[p.CapabilityCallResult](t, c.want(0, "caps", "call", "fake.a.fail", "-o", "json"))
	is.Equal(failed.Outcome, "error") // a tool error is the capability's error outcome

	// runs watch: a run that completed, one that failed, one interrupted,
	// and one still running.
	done := cliJSON[p.RunResult](t, c.want(0, "run", "counter_workflow.default", "--wait", "-o", "json"))
	r = c.want(0, "runs", "watch", *done.RunID)
	is.True(strings.Contains(r.stdout, "call: ok")) // its steps, replayed
	is.True(strings.Contains(r.stdout, "completed"))
	watched := cliJSON[p.RunResult](t, c.want(0, "runs", "watch", *done.RunID, "-o", "json"))
	is.Equal(watched.Output["count"], done.Output["count"])
	c.want(0, "workflow", "new", "--from-capability", "fake.a.fail", "--workspace-id", "f_ws", "--artifact-id", "f", "--deployment-id", "f.one")
	bad := cliJSON[p.RunResult](t, c.want(2, "run", "f.one", "--wait", "-o", "json"))
	r = c.want(2, "runs", "watch", *bad.RunID)
	is.True(strings.Contains(r.stderr, "failed"))
	saveDraft(t, dialURL(t, srv.url), "ask", askDraft)
	c.want(0, "deploy", "--artifact", "ask")
	asked := cliJSON[p.RunResult](t, c.want(3, "run", "ask.default", "-o", "json"))
	r = c.want(3, "runs", "watch", *asked.RunID)
	is.True(strings.Contains(r.stderr, "mcpflow runs resume "+*asked.RunID))
	c.want(0, "workflow", "new", "--from-capability", "fake.a.sleep", "--workspace-id", "s_ws", "--artifact-id", "s", "--deployment-id", "s.one")
	cl := dialURL(t, srv.url)
	noWait := false
	started, err := cl.RunDeployment(testContext(t), p.StartRunParams{DeploymentID: "s.one", WorkflowInput: p.Object{"ms": 1500}, Wait: &noWait})
	is.NoErr(err)
	is.Equal(started.Status, "running")
	r = c.want(0, "runs", "watch", *started.RunID) // follows it live to its end
	is.True(strings.Contains(r.stdout, "completed"))

	// events: the log, then following it.
	r = c.want(0, "events")
	is.True(strings.Contains(r.stdout, "workflow_deployment_saved"))
	evs := cliJSON[p.ListAdminEventsResult](t, c.want(0, "events", "-o", "json"))
	is.True(evs.Total > 0)
	follow := startFollowingEvents(t, srv.url)
	follow.next(t, "workflow_deployment_saved") // the kept events come first
	c.want(0, "deploy", "--artifact", "counter_workflow", "--id", "counter.live", "--bind", "demo.default=demo.default")
	live := follow.next(t, "workflow_deployment_saved", "counter.live") // then the new one, live
	is.True(live.Sequence > 0)

	// auth: the secret comes from stdin and is never shown.
	const secret = "tok-never-shown-0123456789"
	r = withStdin(secret+"\n").want(0, "auth", "save", "gh", "--scheme", "bearer", "--token-file", "-", "--metadata", `{"team":"core"}`)
	is.True(strings.Contains(r.stdout, "token"))
	headers := write("headers.json", p.Object{"headers": p.Object{"X-Api-Key": secret}})
	hdr := cliJSON[p.AuthRecordSummary](t, c.want(0, "auth", "save", "jira", "--scheme", "headers", "--payload-file", headers, "-o", "json"))
	is.Equal(hdr.PayloadKeys, []string{"headers"})
	var outputs []string
	for _, args := range [][]string{{"auth", "list"}, {"auth", "list", "-o", "json"}, {"auth", "inspect", "gh"}, {"auth", "inspect", "gh", "-o", "json"}} {
		r := c.want(0, args...)
		outputs = append(outputs, r.stdout, r.stderr)
	}
	is.True(strings.Contains(outputs[0], "gh") && strings.Contains(outputs[0], "jira"))
	records := cliJSON[p.ListAuthRecordsResult](t, cliResult{stdout: outputs[2]})
	is.Equal(records.Total, 2)
	for _, out := range append(outputs, r.stdout) {
		is.True(!strings.Contains(out, secret)) // no secret in any output
	}
	removed := cliJSON[p.DeleteAuthRecordResult](t, c.want(0, "auth", "delete", "jira", "-o", "json"))
	is.True(removed.Deleted)
	r = c.want(0, "auth", "delete", "gh")
	is.True(strings.Contains(r.stdout, "deleted:"))

	// registry: inspect, update, disable, enable.
	c.want(0, "registry", "add", write("entry.json", p.Object{"id": "fake.b", "transport": config.Transport{Kind: config.TransportStdio, Command: fakeMCP}}))
	r = c.want(0, "registry", "inspect", "fake.b")
	is.True(strings.Contains(r.stdout, "fake.b"))
	r = withStdin(`{"metadata":{"team":"core"}}`).want(0, "registry", "update", "fake.b", "-")
	is.True(strings.Contains(r.stdout, "updated:"))
	inspected := cliJSON[p.InspectRegistryEntryResult](t, c.want(0, "registry", "inspect", "fake.b", "-o", "json"))
	is.Equal(inspected.Entry.Metadata["team"], "core")
	off := cliJSON[p.RegistryEntryMutationResult](t, c.want(0, "registry", "disable", "fake.b", "-o", "json"))
	is.True(!off.Entry.Enabled)
	r = c.want(0, "registry", "enable", "fake.b")
	is.True(regexp.MustCompile(`enabled:\s+yes`).MatchString(r.stdout))
	c.want(1, "registry", "update", "fake.b", "-") // no patch on stdin

	// sources: inspect, resources, prompts.
	r = c.want(0, "sources", "inspect", "fake.a")
	is.True(strings.Contains(r.stdout, "echo"))
	src := cliJSON[p.InspectSourceResult](t, c.want(0, "sources", "inspect", "fake.a", "-o", "json"))
	is.True(slices.Contains(src.Capabilities.NodeSpecs, "fake.a.echo"))
	r = c.want(0, "sources", "resources", "fake.a")
	is.True(strings.Contains(r.stdout, fakes.GreetingURI) || strings.Contains(r.stdout, "greeting"))
	res := cliJSON[struct {
		SourceID string   `json:"source_id"`
		Names    []string `json:"names"`
	}](t, c.want(0, "sources", "resources", "fake.a", "-o", "json"))
	is.Equal(res.SourceID, "fake.a")
	is.Equal(len(res.Names), 1)
	r = c.want(0, "sources", "prompts", "fake.a")
	is.True(strings.Contains(r.stdout, "offers none"))
	prompts := cliJSON[map[string]any](t, c.want(0, "sources", "prompts", "fake.a", "-o", "json"))
	is.Equal(prompts["names"], []any{})
	c.want(1, "sources", "inspect", "no.such")

	// explain and schema.
	r = c.want(0, "explain", "unknown_start")
	is.True(strings.Contains(r.stdout, "How to repair it"))
	info := cliJSON[workflow.CodeInfo](t, c.want(0, "explain", "unknown_start", "-o", "json"))
	is.Equal(info.Code, "unknown_start")
	c.want(1, "explain", "no_such_code")
	r = c.want(0, "schema", "methods")
	is.True(strings.Contains(r.stdout, p.MethodRunsSubscribe))
	for _, doc := range []string{"draft", "plan", "deployment"} {
		s := cliJSON[map[string]any](t, c.want(0, "schema", doc, "-o", "json"))
		is.True(s["$defs"] != nil)
	}

	// Completion of ids, from the server.
	completeOn := func(c cliTool, args ...string) []string {
		r := c.want(0, append([]string{"__complete"}, args...)...)
		var words []string
		for _, line := range strings.Split(r.stdout, "\n") {
			if word, _, _ := strings.Cut(line, "\t"); word != "" && !strings.HasPrefix(word, ":") {
				words = append(words, word)
			}
		}
		return words
	}
	complete := func(args ...string) []string { return completeOn(c, args...) }
	is.True(slices.Contains(complete("runs", "watch", ""), *done.RunID))
	is.True(slices.Contains(complete("run", ""), "counter_workflow.default"))
	is.True(slices.Contains(complete("draft", "get", ""), "counter_ws"))
	is.True(slices.Contains(complete("draft", "route", "set", "counter"), "counter_ws"))
	is.True(slices.Contains(complete("deployments", "validate", "counter"), "counter.live"))
	is.True(slices.Contains(complete("caps", "call", "fake.a.e"), "fake.a.echo"))
	is.True(!slices.Contains(complete("caps", "call", "fake.a.e"), "fake.a.fail")) // only what the word begins
	is.True(slices.Contains(complete("workflow", "new", "--from-capability", "demo."), "demo.default.counter"))
	is.Equal(complete("runs", "watch", *done.RunID, ""), []string(nil)) // one RUN only
	down := cliTool{t: t, url: "ws://" + freeAddr(t) + "/ws"}
	is.Equal(completeOn(down, "runs", "watch", ""), []string(nil)) // no server: no ids, and exit 0
}

// eventFollower reads the lines of `mcpflow events --follow -o json`.
type eventFollower struct {
	lines chan eventLine
}

// eventLine is one event `events --follow -o json` printed.
type eventLine struct {
	Sequence int64 `json:"sequence"`
	p.AdminEvent
	raw json.RawMessage
}

// startFollowingEvents runs `mcpflow events --follow -o json` against
// url until the test ends.
func startFollowingEvents(t *testing.T, url string) *eventFollower {
	t.Helper()
	is := is.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, binary, "events", "--follow", "-o", "json", "--url", url, "--wait-timeout", "2m")
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "MCPFLOW_") })
	out, err := cmd.StdoutPipe()
	is.NoErr(err)
	is.NoErr(cmd.Start())
	f := &eventFollower{lines: make(chan eventLine, 1024)}
	read := make(chan struct{})
	go func() {
		defer close(read)
		defer close(f.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var e eventLine
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				e.raw = append(json.RawMessage(nil), sc.Bytes()...)
				f.lines <- e
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-read
		_ = cmd.Wait()
	})
	return f
}

// next is the next event of kind whose line holds each of holds, within
// 20 s.
func (f *eventFollower) next(t *testing.T, kind string, holds ...string) eventLine {
	t.Helper()
	is := is.New(t)
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for {
		select {
		case e, ok := <-f.lines:
			is.True(ok) // events --follow goes on
			if e.Kind == kind && !slices.ContainsFunc(holds, func(h string) bool { return !strings.Contains(string(e.raw), h) }) {
				return e
			}
		case <-deadline.C:
			t.Logf("no %s event holding %q within 20s", kind, holds)
			is.Fail()
		}
	}
}
