package integration

// Recovery from upstream faults, through the real WebSocket edge with
// real fakemcp subprocesses: a hung upstream, an HTTP upstream restarted
// under its session, a tool added at runtime, and a source that is down
// when mcpflow starts.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// hungKeepAlive is the keepalive of TestHungUpstreamIsCutOffAtItsDeadline:
// a ping is missed KeepAlive/2 after it is sent, and one missed ping ends
// the session, so a hang is noticed at the earliest 2 s after it starts,
// well after the 1 s step timeout.
const hungKeepAlive = 4 * time.Second

// hangDraft calls sleep with a step timeout of one second. A call that
// fails (rather than reporting a tool error) fails the run.
const hangDraft = `{"name":"hang","start":"call","outcomes":["ok","error"],
	"input_schema":{"type":"object","properties":{"ms":{"type":"integer"}},"required":["ms"]},
	"state_schema":{"type":"object","properties":{"slept_ms":{"type":"integer"}}},
	"steps":{
		"call":{"use":"hung.default.sleep","timeout_seconds":1,"input":[{"target":"ms","path":"input.ms"}],"output":[{"source":"slept_ms","target":"state.slept_ms"}]},
		"tool_error":{"end":{"outcome":"error"}}},
	"routes":{"call":{"ok":"__end__","error":"tool_error"}}}`

// quickSupervision reopens a session within 50 to 200 ms and never
// degrades the connection.
func quickSupervision() *config.Supervision {
	return &config.Supervision{MinBackoffMS: 50, MaxBackoffMS: 200, MaxRestarts: ptr(0)}
}

// TestHungUpstreamIsCutOffAtItsDeadlineAndTheSessionRecovers freezes a
// stdio upstream (SIGSTOP) while a run's call waits on it: the call fails
// at its step timeout and the run is failed, saying so; the keepalive then
// finds the session hung, the frozen process is killed, a new session
// (generation 2) opens on a new process, and the next run completes on it.
func TestHungUpstreamIsCutOffAtItsDeadlineAndTheSessionRecovers(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test: freezes a real upstream process")
	}
	is := is.New(t)
	marker := fmt.Sprintf("MCPFLOW_HUNG_TEST=%d", time.Now().UnixNano())
	name, value, _ := strings.Cut(marker, "=")
	src := stdioSource("hung.default", fakeMCP)
	src.Transport.Env = map[string]string{name: value}
	src.Supervision = quickSupervision()
	svc := startServiceTuned(t, func(o *app.Options) {
		o.RunWait = 0 // runs.start answers at once; the test follows the run
		o.Supervisor.Session.KeepAlive = hungKeepAlive
		o.Supervisor.Session.PingTimeout, o.Supervisor.Session.PingFailures = hungKeepAlive/2, 1
		o.Supervisor.Session.StdioCloseGrace = 200 * time.Millisecond
		o.Supervisor.Session.StdioTermGrace = 200 * time.Millisecond
	}, src)
	c := svc.dial(t)
	ctx := testContext(t)
	saveArtifact(t, c, "hang", hangDraft, []string{"ok", "error"})
	_, err := c.SaveDeployment(ctx, p.Object{"id": "hang.default", "artifact_id": "hang", "artifact_version": 1,
		"bindings": []any{p.Object{"logical_source": "hung.default", "concrete_source": "hung.default"}}})
	is.NoErr(err)
	waitForStatus(t, c, func(st p.ConnectionStatus) bool { return st.Session.State == "open" })
	procs := faultUpstreams(marker)
	is.Equal(len(procs), 1) // one upstream process
	var frozen int
	for pid := range procs {
		frozen = pid
	}
	t.Cleanup(func() {
		if faultUpstreams(marker)[frozen] {
			_ = syscall.Kill(frozen, syscall.SIGKILL) // the test failed before mcpflow killed it
		}
	})

	started, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: "hang.default", WorkflowInput: p.Object{"ms": 60_000}})
	is.NoErr(err)
	is.True(started.RunID != nil)
	waitForStatus(t, c, func(st p.ConnectionStatus) bool { return st.Session.CallsInFlight == 1 })
	is.NoErr(syscall.Kill(frozen, syscall.SIGSTOP)) // the upstream hangs mid-call
	hungAt := time.Now()

	run := settled(t, c, *started.RunID)
	cutOff := time.Since(hungAt)
	t.Logf("hung call ended after %s: %s, %v", cutOff.Round(time.Millisecond), run.Status, deref(run.Error))
	is.Equal(run.Status, "failed") // the run is terminal
	is.True(run.Error != nil && strings.Contains(*run.Error, `step "call"`) &&
		strings.Contains(*run.Error, "deadline exceeded")) // at its step's deadline, saying so
	is.True(!strings.Contains(*run.Error, "session_lost")) // the deadline, not the keepalive, ended it
	is.True(cutOff < hungKeepAlive/2)                      // within the step timeout, before any keepalive could fail

	st := waitForStatus(t, c, func(st p.ConnectionStatus) bool {
		return st.Session.State == "open" && st.Session.Generation == 2
	})
	recovered := time.Since(hungAt)
	is.True(st.Session.LastError != nil && strings.Contains(*st.Session.LastError, "keepalive failed")) // the keepalive found the hang
	is.Equal(st.Session.SessionsOpened, 2)

	// The frozen process is killed (SIGKILL ends a stopped process) and
	// a new one serves the new session.
	poll.For(t, fmt.Sprintf("the frozen upstream %d killed once the new session opened", frozen), 10*time.Second,
		func() bool { return !faultUpstreams(marker)[frozen] })
	procs = faultUpstreams(marker)
	is.Equal(len(procs), 1) // only the new process is left
	is.True(!procs[frozen])

	next, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: "hang.default", WorkflowInput: p.Object{"ms": 1}})
	is.NoErr(err)
	done := settled(t, c, *next.RunID)
	is.Equal(done.Status, "completed") // the next run succeeds
	is.Equal(deref(done.Outcome), "ok")
	var trace p.RunResult
	is.NoErr(c.Call(ctx, p.MethodRunsTrace, p.TraceParams{RunID: *next.RunID, TraceRange: p.TraceRange{}}, &trace))
	is.Equal(len(trace.Trace), 1)
	is.Equal(trace.Trace[0].Generation, int64(2)) // on the new session
	t.Logf("hang to new session: %s (keepalive %s)", recovered.Round(time.Millisecond), hungKeepAlive)
}

// TestRestartedHTTPUpstreamIsReinitialized kills a streamable-HTTP
// fakemcp between runs and starts a new one on the same port: the next
// run completes on a new session, initialized afresh, as the counter
// (kept per MCP session) starting over from 1 shows.
func TestRestartedHTTPUpstreamIsReinitialized(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test: starts the real binary and restarts its upstream")
	}
	is := is.New(t)
	const conn = "restarted.default"
	addr := freeAddr(t)
	upstream := startFakeHTTP(t, addr)
	src := httpSource(conn, addr)
	src.Supervision = quickSupervision()
	pr := startProcess(t, writeConfig(t, t.TempDir(), src), "restart.log")
	c := dialURL(t, pr.url)
	deployment := buildCounterDeployment(t, c, conn)
	is.Equal(runCounter(t, c, deployment), p.Object{"count": float64(1)})
	is.Equal(runCounter(t, c, deployment), p.Object{"count": float64(2)}) // one MCP session so far
	before := onlyStatus(t, c).Session
	is.Equal(before.Generation, int64(1))

	upstream.kill(t)
	startFakeHTTP(t, addr) // a new process on the same port, which knows no session
	restarted := time.Now()
	is.Equal(runCounter(t, c, deployment), p.Object{"count": float64(1)}) // a fresh initialize: the counter starts over
	after := onlyStatus(t, c).Session
	t.Logf("run after the restart done in %s; generation %d, %d restarts, last error %v",
		time.Since(restarted).Round(time.Millisecond), after.Generation, after.Restarts, deref(after.LastError))
	is.Equal(after.State, "open")
	is.True(after.Generation > before.Generation) // a new session
	is.Equal(runCounter(t, c, deployment), p.Object{"count": float64(2)})
}

// TestToolAddedAtRuntimeAppearsInTheCatalog has a run call fakemcp's
// add_tool, which registers a new tool and announces
// notifications/tools/list_changed: the new tool appears in the catalog
// with no refresh_catalog, and a deployment of it runs, all on the session
// the server was first listed on.
func TestToolAddedAtRuntimeAppearsInTheCatalog(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real binary")
	}
	is := is.New(t)
	const conn = "dynamic.default"
	src := stdioSource(conn, fakeMCP)
	src.Transport.Env = map[string]string{"FAKEMCP_ADD_TOOL": "1"}
	pr := startProcess(t, writeConfig(t, t.TempDir(), src), "runtime.log", "--run-wait", "30s")
	c := dialURL(t, pr.url)
	ctx := testContext(t)
	is.Equal(capabilityNames(t, c, conn), []string{"add_tool", "counter", "crash", "echo", "fail", "idle", "overlap", "sleep"}) // listed at start

	adder := buildToolDeployment(t, c, conn, "add_tool", "add_tool_workflow")
	run := runCompleted(t, c, adder, p.Object{"name": "shout"})
	is.Equal(run.Output, p.Object{"added": "shout"})
	added := time.Now()
	poll.For(t, conn+".shout in the catalog without a refresh", 10*time.Second, func() bool {
		return slices.Contains(capabilityNames(t, c, conn), "shout")
	})
	t.Logf("new tool listed %s after the run that added it", time.Since(added).Round(time.Millisecond))
	detail, err := c.InspectCapability(ctx, conn+".shout")
	is.NoErr(err)
	is.Equal(detail.InputSchema["required"], []any{"message"})

	shout := buildToolDeployment(t, c, conn, "shout", "shout_workflow")
	run = runCompleted(t, c, shout, p.Object{"message": "hello"})
	is.Equal(run.Output, p.Object{"message": "hello"}) // the new tool runs
	st := onlyStatus(t, c)
	is.Equal(st.NodeCount, 9)
	is.Equal(st.Session.SessionsOpened, 1) // the change came over the open session
}

// TestSourceDownAtStartupGetsItsCatalogWhenItComesUp starts mcpflow with
// an HTTP source on a port where nothing listens: the connection backs off
// and has no catalog. Once fakemcp listens there, the session opens and
// the catalog is listed, with no refresh_catalog, and a run uses it.
func TestSourceDownAtStartupGetsItsCatalogWhenItComesUp(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real binary")
	}
	is := is.New(t)
	const conn = "late.default"
	addr := freeAddr(t) // nothing listens here yet
	src := httpSource(conn, addr)
	src.Supervision = quickSupervision()
	pr := startProcess(t, writeConfig(t, t.TempDir(), src), "down.log", "--run-wait", "30s")
	c := dialURL(t, pr.url)
	ctx := testContext(t)

	st := waitForStatus(t, c, func(st p.ConnectionStatus) bool { return st.Session.State == "backoff" && st.Session.Restarts >= 2 })
	t.Logf("down: %s after %d restarts, last error %v", st.Session.State, st.Session.Restarts, deref(st.Session.LastError))
	is.True(!st.HasSnapshot) // no catalog
	is.Equal(st.NodeCount, 0)
	is.True(st.Session.LastError != nil && strings.Contains(*st.Session.LastError, "connection refused"))
	is.Equal(len(capabilityNames(t, c, conn)), 0)

	startFakeHTTP(t, addr)
	up := time.Now()
	st = waitForStatus(t, c, func(st p.ConnectionStatus) bool {
		return st.Session.State == "open" && st.HasSnapshot && st.NodeCount == 7
	})
	t.Logf("catalog listed %s after the source came up", time.Since(up).Round(time.Millisecond))
	is.Equal(st.Session.Generation, int64(1))
	is.True(slices.Contains(capabilityNames(t, c, conn), "echo"))
	detail, err := c.InspectCapability(ctx, conn+".echo")
	is.NoErr(err)
	is.Equal(detail.SourceID, conn)

	echo := buildToolDeployment(t, c, conn, "echo", "echo_workflow")
	run := runCompleted(t, c, echo, p.Object{"message": "up"})
	is.Equal(run.Output, p.Object{"message": "up"})
}

// httpSource is a streamable-HTTP source at addr.
func httpSource(id, addr string) config.Connection {
	return config.Connection{Kind: "mcp", ID: id, Transport: config.Transport{Kind: config.TransportHTTP, URL: "http://" + addr + "/mcp"}}
}

// capabilityNames lists the tool names of connection conn's catalog,
// sorted.
func capabilityNames(t *testing.T, c *client.Client, conn string) []string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	listed, err := c.ListCapabilities(testContext(t), p.ListCapabilitiesParams{SourceID: ptr(conn), Limit: ptr(100)})
	is.NoErr(err)
	var names []string
	for _, capability := range listed.Capabilities {
		names = append(names, strings.TrimPrefix(capability.Name, conn+"."))
	}
	slices.Sort(names)
	return names
}

// fakeHTTP is a fakemcp subprocess serving streamable HTTP.
type fakeHTTP struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process is reaped
}

// startFakeHTTP starts fakemcp serving streamable HTTP on addr (each MCP
// session with its own server) and waits until it accepts connections.
// Cleanup kills it.
func startFakeHTTP(t testing.TB, addr string) *fakeHTTP {
	t.Helper()
	return startFakeHTTPWith(t, addr)
}

// startFakeHTTPWith is startFakeHTTP with fakemcp's environment extended
// by env ("NAME=value"; see fakes/cmd/fakemcp).
func startFakeHTTPWith(t testing.TB, addr string, env ...string) *fakeHTTP {
	t.Helper()
	is := is.New(t)
	is.Helper()
	logs := filepath.Join(t.TempDir(), "fakemcp.log")
	out, err := os.Create(logs)
	is.NoErr(err)
	defer out.Close()
	cmd := exec.Command(fakeMCP)
	cmd.Env = append(append(os.Environ(), "FAKEMCP_HTTP="+addr), env...)
	cmd.Stdout, cmd.Stderr = out, out
	is.NoErr(cmd.Start()) // start fakemcp over HTTP
	f := &fakeHTTP{cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(f.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-f.exited
	})
	awaitAccepting(t, "fakemcp", addr, 10*time.Second, exitedWhen(f.exited, func() string { data, _ := os.ReadFile(logs); return string(data) }))
	return f
}

// kill SIGKILLs the server and waits until it is gone.
func (f *fakeHTTP) kill(t *testing.T) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	is.NoErr(f.cmd.Process.Kill()) // SIGKILL fakemcp
	select {
	case <-f.exited:
	case <-time.After(10 * time.Second):
		is.Fail() // fakemcp dies promptly after SIGKILL
	}
}
