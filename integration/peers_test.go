package integration

// Tests against real third-party MCP servers, reached through mcpflow's
// WebSocket edge:
//
//   - npm @modelcontextprotocol/server-sequential-thinking over stdio (a
//     per-process counter, thoughtHistoryLength), installed under the
//     prefix $MCPFLOW_PEERS (default <module root>/.peers);
//   - the go-sdk example server "everything" (built from the module graph)
//     over stdio and over streamable HTTP;
//   - the mcpflow demo server killed with SIGKILL between two runs.

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// Pinned versions of the third-party peers.
const (
	seqThinkingPackage = "@modelcontextprotocol/server-sequential-thinking"
	seqThinkingVersion = "2026.8.31"
	everythingPackage  = "github.com/modelcontextprotocol/go-sdk/examples/server/everything"
)

// moduleRoot walks up from the working directory to the directory that
// holds go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	dir, err := os.Getwd()
	is.NoErr(err) // the working directory
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			is.Fail() // a go.mod above the test's working directory
		}
		dir = parent
	}
}

// peersPrefix is the npm install prefix of the third-party peers:
// $MCPFLOW_PEERS, or <module root>/.peers.
func peersPrefix(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("MCPFLOW_PEERS")
	switch {
	case dir == "":
		return filepath.Join(moduleRoot(t), ".peers")
	case !filepath.IsAbs(dir): // relative to the module root, not to integration/
		return filepath.Join(moduleRoot(t), dir)
	}
	return dir
}

// missingPeer fails the test in CI, where the peer must be installed, and
// skips it elsewhere.
func missingPeer(t *testing.T, format string, args ...any) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Logf("%s (CI=true: .ci/run must install it)", msg)
		is.Fail() // in CI every peer is installed
	}
	t.Skip(msg)
}

// sequentialThinking returns the node executable and the server's entry
// point, or skips (fails in CI) when either is missing.
func sequentialThinking(t *testing.T) (node, script string) {
	t.Helper()
	install := fmt.Sprintf("install it from the module root with: npm install --prefix .peers %s@%s (or set MCPFLOW_PEERS to another install prefix)", seqThinkingPackage, seqThinkingVersion)
	node, err := exec.LookPath("node")
	if err != nil {
		missingPeer(t, "node is not on PATH; the sequential-thinking peer needs Node.js >= 18; then %s", install)
	}
	script = filepath.Join(peersPrefix(t), "node_modules", filepath.FromSlash(seqThinkingPackage), "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		missingPeer(t, "%s not found at %s; %s", seqThinkingPackage, script, install)
	}
	return node, script
}

var everything struct {
	once sync.Once
	path string
	err  error
}

// everythingBinary builds the go-sdk example server once per test binary,
// next to the mcpflow binary so TestMain removes it.
func everythingBinary(t *testing.T) string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	everything.once.Do(func() {
		path := filepath.Join(filepath.Dir(binary), "everything")
		out, err := exec.Command("go", "build", "-o", path, everythingPackage).CombinedOutput()
		if err != nil {
			everything.err = fmt.Errorf("go build %s: %w\n%s", everythingPackage, err, out)
			return
		}
		everything.path = path
	})
	is.NoErr(everything.err) // build the everything server
	return everything.path
}

// buildToolDeployment authors, saves and deploys a workflow wrapping the
// tool of connection connID, and returns the deployment id.
func buildToolDeployment(t testing.TB, c *client.Client, connID, tool, name string) string {
	t.Helper()
	is := is.New(t)
	ctx := testContext(t)
	ws, err := c.CreateDraftWorkspaceFromCapability(ctx, p.CreateFromCapabilityParams{
		WorkspaceID: name + "_ws", CapabilityName: connID + "." + tool, Name: ptr(name), Title: ptr(name),
	})
	is.NoErr(err)
	is.Equal(ws.Status, "valid")
	saved, err := c.CreateArtifactFromWorkspace(ctx, p.CreateArtifactParams{
		WorkspaceID: name + "_ws", ArtifactID: name, Version: 1, Title: name, Outcomes: []string{"ok", "error"}, Kind: ptr("workflow"),
	})
	is.NoErr(err)
	is.True(saved.Saved)
	is.Equal(saved.RequiredLogicalSources, []string{connID})
	dep, err := c.SaveDeployment(ctx, p.Object{
		"id": name + ".default", "artifact_id": name, "artifact_version": 1,
		"bindings": []any{p.Object{"logical_source": connID, "concrete_source": connID}},
	})
	is.NoErr(err)
	is.True(dep.Saved)
	return dep.DeploymentID
}

// runCompleted runs the deployment and checks it completed with outcome ok.
func runCompleted(t *testing.T, c *client.Client, deploymentID string, input p.Object) p.RunResult {
	t.Helper()
	is := is.New(t)
	is.Helper()
	run, err := c.RunDeployment(testContext(t), p.StartRunParams{DeploymentID: deploymentID, WorkflowInput: input})
	is.NoErr(err)
	if run.Status != "completed" {
		t.Logf("run %s: status %q, error %v, diagnostics %+v", deploymentID, run.Status, deref(run.Error), run.Diagnostics)
	}
	is.Equal(run.Status, "completed") // the run completes
	is.Equal(*run.Outcome, "ok")
	return run
}

// onlyStatus returns the status of the service's single connection.
func onlyStatus(t *testing.T, c *client.Client) p.ConnectionStatus {
	t.Helper()
	is := is.New(t)
	statuses, err := c.GetConnectionStatuses(testContext(t))
	is.NoErr(err)
	is.Equal(statuses.Total, 1)
	return statuses.Statuses[0]
}

func TestPeerSequentialThinkingKeepsOneProcess(t *testing.T) {
	node, script := sequentialThinking(t)
	is := is.New(t)
	const conn = "seqthink.default"
	src := stdioSource(conn, node, script)
	src.Transport.Env = map[string]string{"DISABLE_THOUGHT_LOGGING": "true"}
	svc := startService(t, nil, src)
	c := svc.dial(t)
	ctx := testContext(t)

	refreshed, err := c.RefreshConnectionCatalog(ctx, conn)
	is.NoErr(err)
	is.Equal(refreshed.NodeCount, 1) // the server has one tool

	detail, err := c.InspectCapability(ctx, conn+".sequentialthinking")
	is.NoErr(err)
	is.Equal(detail.SourceID, conn)
	required := map[string]bool{}
	for _, f := range detail.InputSchema["required"].([]any) {
		required[f.(string)] = true
	}
	is.Equal(required, map[string]bool{"thought": true, "nextThoughtNeeded": true, "thoughtNumber": true, "totalThoughts": true})
	outProps, _ := detail.OutputSchema["properties"].(map[string]any)
	is.True(outProps["thoughtHistoryLength"] != nil) // the tool declares structured output

	deployment := buildToolDeployment(t, c, conn, "sequentialthinking", "think_once")
	input := p.Object{"thought": "mcpflow keeps one upstream session", "nextThoughtNeeded": false, "thoughtNumber": 1, "totalThoughts": 1}
	for want := 1; want <= 2; want++ {
		run := runCompleted(t, c, deployment, input)
		// structuredContent, projected through the scaffold's output map.
		is.Equal(run.Output, p.Object{
			"thoughtNumber": float64(1), "totalThoughts": float64(1), "nextThoughtNeeded": false,
			"branches": []any{}, "thoughtHistoryLength": float64(want),
		})
	}

	st := onlyStatus(t, c)
	is.Equal(st.Session.State, "open")
	is.Equal(st.Session.SessionsOpened, 1) // one node process served the refresh and both runs
}

func TestEverythingOverStdio(t *testing.T) {
	is := is.New(t)
	const conn = "everything.default"
	svc := startService(t, nil, stdioSource(conn, everythingBinary(t)))
	c := svc.dial(t)
	ctx := testContext(t)

	refreshed, err := c.RefreshConnectionCatalog(ctx, conn)
	is.NoErr(err)
	is.Equal(refreshed.NodeCount, 10)
	is.True(refreshed.ResourceCount >= 1)
	is.True(refreshed.PromptCount >= 1)

	listed, err := c.ListCapabilities(ctx, p.ListCapabilitiesParams{SourceID: ptr(conn), Limit: ptr(100)})
	is.NoErr(err)
	names := map[string]bool{}
	for _, capability := range listed.Capabilities {
		names[capability.Name] = true
	}
	for _, tool := range []string{"greet", "greet (structured)", "ping", "log", "sample", "roots"} {
		is.True(names[conn+"."+tool]) // tool listed
	}

	greet, err := c.InspectCapability(ctx, conn+".greet")
	is.NoErr(err)
	is.Equal(greet.InputSchema["required"], []any{"name"})

	deployment := buildToolDeployment(t, c, conn, "greet", "greet_stdio")
	for _, name := range []string{"stdio", "again"} {
		run := runCompleted(t, c, deployment, p.Object{"name": name})
		// A content-only tool's result is projected as {"content": [...]}.
		is.Equal(run.Output, p.Object{"content": []any{map[string]any{"type": "text", "text": "Hi " + name}}})
	}

	st := onlyStatus(t, c)
	is.Equal(st.Session.State, "open")
	is.Equal(st.Session.SessionsOpened, 1)
}

func TestEverythingOverStreamableHTTP(t *testing.T) {
	is := is.New(t)
	addr := startEverythingHTTP(t)
	const conn = "everythinghttp.default"
	src := config.Connection{Kind: "mcp", ID: conn, Transport: config.Transport{Kind: config.TransportHTTP, URL: "http://" + addr + "/mcp"}}
	svc := startService(t, nil, src)
	c := svc.dial(t)

	refreshed, err := c.RefreshConnectionCatalog(testContext(t), conn)
	is.NoErr(err)
	is.Equal(refreshed.NodeCount, 10)

	deployment := buildToolDeployment(t, c, conn, "greet (structured)", "greet_http")
	for _, name := range []string{"http", "again"} {
		run := runCompleted(t, c, deployment, p.Object{"name": name})
		is.Equal(run.Output, p.Object{"message": "Hi " + name}) // structuredContent
	}

	st := onlyStatus(t, c)
	is.Equal(st.Session.State, "open")
	is.Equal(st.Session.SessionsOpened, 1) // one Mcp-Session-Id for the refresh and both runs
}

// startEverythingHTTP starts the go-sdk everything server on a free
// loopback port and returns its address once it accepts connections.
func startEverythingHTTP(t *testing.T) string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	bin := everythingBinary(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err) // listen for a free port
	addr := l.Addr().String()
	is.NoErr(l.Close()) // free the port for the server

	// Its output goes to a file, which the poll below may read while the
	// server still writes (a strings.Builder written by exec's copying
	// goroutine and read here was a data race).
	logPath := filepath.Join(t.TempDir(), "everything-server.log")
	out, err := os.Create(logPath)
	is.NoErr(err)
	defer out.Close()
	cmd := exec.Command(bin, "-http", addr)
	cmd.Stdout, cmd.Stderr = out, out
	is.NoErr(cmd.Start()) // start the everything server
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			t.Logf("everything server (pid %d) did not exit after SIGKILL", cmd.Process.Pid)
			is.Fail() // the everything server exits after SIGKILL
		}
	})

	awaitAccepting(t, "the everything server", addr, 10*time.Second, func() (bool, string) {
		logs, _ := os.ReadFile(logPath)
		select {
		case err := <-exited:
			exited <- err // let the cleanup see it too
			return true, fmt.Sprintf("%v\n%s", err, logs)
		default:
			return false, string(logs)
		}
	})
	return addr
}

func TestDemoServerDeathStartsNewProcess(t *testing.T) {
	is := is.New(t)
	const conn = "demo.default"
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	wrapper := filepath.Join(dir, "demo-server.sh")
	script := fmt.Sprintf("#!/bin/sh\necho $$ > %s\nexec %s demo-server\n", shellQuote(pidFile), shellQuote(binary))
	is.NoErr(os.WriteFile(wrapper, []byte(script), 0o755))

	svc := startService(t, nil, stdioSource(conn, wrapper))
	c := svc.dial(t)
	deployment := buildCounterDeployment(t, c, conn) // the refresh starts the first process

	run := runCompleted(t, c, deployment, p.Object{})
	is.Equal(run.Output, p.Object{"count": float64(1)})
	first := readPID(t, pidFile)
	is.Equal(onlyStatus(t, c).Session.SessionsOpened, 1)

	is.NoErr(syscall.Kill(first, syscall.SIGKILL))
	// The supervision policy reopens the session by itself, in a new
	// process: the second generation.
	st := waitForStatus(t, c, func(st p.ConnectionStatus) bool {
		return st.Session.State == "open" && st.Session.Generation == 2
	})
	is.True(st.Session.LastError != nil) // the actor saw the session end
	is.Equal(st.Session.SessionsOpened, 2)
	is.Equal(st.Session.Restarts, 1)

	// The next run uses it. The counter starts over: its state died with
	// the old process.
	run = runCompleted(t, c, deployment, p.Object{})
	is.Equal(run.Output, p.Object{"count": float64(1)})
	second := readPID(t, pidFile)
	is.True(second != first)

	st = onlyStatus(t, c)
	is.Equal(st.Session.State, "open")
	is.Equal(st.Session.SessionsOpened, 2)
	is.True(*st.Session.LastSuccessAtEpochMs >= *st.Session.LastErrorAtEpochMs) // the error is past
}

// waitForStatus polls the single connection's status until ok accepts
// it, for at most 10 seconds.
func waitForStatus(t *testing.T, c *client.Client, ok func(p.ConnectionStatus) bool) p.ConnectionStatus {
	t.Helper()
	is := is.New(t)
	is.Helper()
	var st p.ConnectionStatus
	if !poll.Until(10*time.Second, func() bool { st = onlyStatus(t, c); return ok(st) }) {
		t.Logf("session status is %+v after 10s (last error %v)", st.Session, deref(st.Session.LastError))
		is.Fail() // the session reaches the awaited status within the deadline
	}
	return st
}

// readPID reads the PID the wrapper script recorded.
func readPID(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	is.New(t).NoErr(err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	is.New(t).NoErr(err)
	return pid
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func deref[T any](v *T) any {
	if v == nil {
		return nil
	}
	return *v
}
