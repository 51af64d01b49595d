package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// shutdownBudget is serve's default --shutdown-timeout.
const shutdownBudget = 10 * time.Second

// writeConfig writes a config of sources with its store under dir and
// returns its path.
func writeConfig(t testing.TB, dir string, sources ...config.Connection) string {
	t.Helper()
	return writeServerConfig(t, dir, config.Server{Sources: sources})
}

// writeServerConfig is writeConfig for a server block of any settings;
// its store root is dir/store, whatever server says.
func writeServerConfig(t testing.TB, dir string, server config.Server) string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	server.Store.Root = filepath.Join(dir, "store")
	cfg := config.File{Version: 1, Server: server}
	data, err := json.Marshal(cfg)
	is.NoErr(err)
	path := filepath.Join(dir, "mcpflow.json")
	is.NoErr(os.WriteFile(path, data, 0o600))
	return path
}

// terminate sends SIGTERM and waits until the process is gone; it
// returns the exit code and how long the process took to exit.
func (pr *process) terminate(t *testing.T) (int, time.Duration) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	start := time.Now()
	is.NoErr(pr.cmd.Process.Signal(syscall.SIGTERM)) // SIGTERM mcpflow
	select {
	case <-pr.exited:
	case <-time.After(3 * shutdownBudget):
		logs, _ := os.ReadFile(pr.logs)
		t.Logf("mcpflow still running %s after SIGTERM\n%s", 3*shutdownBudget, logs)
		is.Fail() // mcpflow exits after SIGTERM
	}
	elapsed := time.Since(start)
	code := pr.cmd.ProcessState.ExitCode()
	if code != 0 {
		logs, _ := os.ReadFile(pr.logs)
		t.Logf("mcpflow exited %d after SIGTERM\n%s", code, logs)
	}
	return code, elapsed
}

// httpBase is the process's http:// address.
func (pr *process) httpBase() string {
	return "http://" + strings.TrimSuffix(strings.TrimPrefix(pr.url, "ws://"), "/ws")
}

// rpcAnswer is what a raw POST /rpc got: the decoded reply, or the error
// of a connection closed without one.
type rpcAnswer struct {
	reply struct {
		Result *p.RunResult     `json:"result"`
		Error  *json.RawMessage `json:"error"`
	}
	status int
	err    error
}

// postRunStart starts a run of deployment with a raw HTTP POST /rpc and
// delivers the answer on the returned channel.
func postRunStart(base, deployment string, input p.Object) <-chan rpcAnswer {
	out := make(chan rpcAnswer, 1)
	go func() {
		var a rpcAnswer
		defer func() { out <- a }()
		body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": p.MethodRunsStart,
			"params": p.StartRunParams{DeploymentID: deployment, WorkflowInput: input}})
		if err != nil {
			a.err = err
			return
		}
		resp, err := http.Post(base+"/rpc", "application/json", strings.NewReader(string(body)))
		if err != nil {
			a.err = err
			return
		}
		defer resp.Body.Close()
		a.status = resp.StatusCode
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			a.err = err
			return
		}
		a.err = json.Unmarshal(data, &a.reply)
	}()
	return out
}

// runningRuns polls until n runs are running and returns their ids.
func runningRuns(t *testing.T, c *client.Client, n int) []string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	ctx := testContext(t)
	var ids []string
	if !poll.Until(20*time.Second, func() bool {
		res, err := c.ListRuns(ctx, p.ListRunsParams{})
		is.NoErr(err)
		ids = nil
		for _, r := range res.Runs {
			if r.Status == "running" {
				ids = append(ids, r.RunID)
			}
		}
		return len(ids) >= n
	}) {
		t.Logf("%d of %d runs running after 20s", len(ids), n)
		is.Fail() // the runs start
	}
	return ids
}

// TestShutdownOnSIGTERMAnswersWaitingRunStartsAndExitsCleanly sends
// SIGTERM while two POST /rpc runs.start wait for their runs (one step of
// 1.5 s, one of 60 s): both POSTs are answered with their run's state,
// the process exits 0 within the budget, the short step finished during
// the drain and is committed completed, and after a restart the long run,
// cut off mid-call in a tool that is not safe to repeat, is failed by the
// recovery rules, saying so.
func TestShutdownOnSIGTERMAnswersWaitingRunStartsAndExitsCleanly(t *testing.T) {
	if testing.Short() {
		t.Skip("shutdown test: starts and stops the real binary")
	}
	is := is.New(t)
	cfgPath := writeConfig(t, t.TempDir(), stdioSource("slow.default", fakeMCP))
	first := startProcess(t, cfgPath, "first.log", "--run-wait", "5m")
	c := dialURL(t, first.url)
	deployment := buildToolDeploymentFor(t, c, "slow.default", "sleep")

	long := postRunStart(first.httpBase(), deployment, p.Object{"ms": 60_000})
	runningRuns(t, c, 1)
	short := postRunStart(first.httpBase(), deployment, p.Object{"ms": 1_500})
	runningRuns(t, c, 2)

	code, elapsed := first.terminate(t)
	t.Logf("SIGTERM with two runs.start waiting: exit %d after %s", code, elapsed.Round(time.Millisecond))
	is.Equal(code, 0)                 // a clean stop exits 0
	is.True(elapsed < shutdownBudget) // within the shutdown budget
	ids := map[string]string{}
	for name, ch := range map[string]<-chan rpcAnswer{"long": long, "short": short} {
		var a rpcAnswer
		select {
		case a = <-ch:
		case <-time.After(5 * time.Second):
			is.Fail() // the POST ended with the process
		}
		is.NoErr(a.err) // the waiting POST got an answer
		is.Equal(a.status, http.StatusOK)
		is.True(a.reply.Result != nil) // the answer is the run's state
		is.Equal(a.reply.Result.Status, "running")
		ids[name] = *a.reply.Result.RunID
	}

	second := startProcess(t, cfgPath, "second.log")
	c2 := dialURL(t, second.url)
	ctx := testContext(t)
	done, err := c2.InspectRun(ctx, ids["short"])
	is.NoErr(err)
	is.Equal(done.Status, "completed") // the step in flight finished during the drain
	is.Equal(done.Output["slept_ms"], float64(1_500))
	cut := settled(t, c2, ids["long"])
	is.Equal(cut.Status, "failed") // cut off mid-call: recovered by the existing rules
	is.True(cut.Error != nil && strings.Contains(*cut.Error, "the outcome of that step is unknown"))
	var trace p.RunResult
	is.NoErr(c2.Call(ctx, p.MethodRunsTrace, p.TraceParams{RunID: ids["long"], TraceRange: p.TraceRange{}}, &trace))
	is.Equal(len(trace.Trace), trace.TraceCount) // the trace reads back whole
}

// TestShutdownOnSIGTERMWithFiveHungServers stops a process whose five
// stdio servers never exit on their own (they ignore stdin EOF and
// SIGTERM, so each graceful close runs into its timeout): the sessions
// close in parallel and the process exits 0 within the budget, leaving no
// server behind.
func TestShutdownOnSIGTERMWithFiveHungServers(t *testing.T) {
	if testing.Short() {
		t.Skip("shutdown test: starts and stops the real binary")
	}
	is := is.New(t)
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	is.NoErr(os.MkdirAll(pids, 0o700))
	var sources []config.Connection
	for i := range 5 {
		src := stdioSource(fmt.Sprintf("hung%d.default", i), "sh", "-c", `echo $$ > "$PIDS/$$"; exec "$FAKEMCP"`)
		src.Transport.Env = map[string]string{"FAKEMCP_STUBBORN": "1", "FAKEMCP": fakeMCP, "PIDS": pids}
		sources = append(sources, src)
	}
	cfgPath := writeConfig(t, dir, sources...)
	pr := startProcess(t, cfgPath, "hung.log")
	c := dialURL(t, pr.url)
	// The warm-up opened every session.
	statuses, err := c.GetConnectionStatuses(testContext(t))
	is.NoErr(err)
	open := 0
	for _, st := range statuses.Statuses {
		if st.Session.State == "open" {
			open++
		}
	}
	is.Equal(open, 5) // five sessions open on hung servers

	code, elapsed := pr.terminate(t)
	t.Logf("SIGTERM with five hung servers: exit %d after %s", code, elapsed.Round(time.Millisecond))
	is.Equal(code, 0)                 // a clean stop exits 0
	is.True(elapsed < shutdownBudget) // within the shutdown budget
	entries, err := os.ReadDir(pids)
	is.NoErr(err)
	is.Equal(len(entries), 5)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		is.NoErr(err)
		poll.For(t, fmt.Sprintf("hung server %d gone with mcpflow", pid), 5*time.Second, func() bool { return syscall.Kill(pid, 0) != nil })
	}
}

// TestSecondServeOnAStoreInUseChangesNothing starts a second `mcpflow
// serve` on the store of a running one: it exits non-zero at once, naming
// the store and the pid that owns it, and the first instance's runs are
// untouched: a running one is still running and then completes.
func TestSecondServeOnAStoreInUseChangesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("lock test: starts the real binary twice")
	}
	is := is.New(t)
	dir := t.TempDir()
	cfgPath := writeConfig(t, dir, stdioSource("slow.default", fakeMCP))
	first := startProcess(t, cfgPath, "first.log")
	c := dialURL(t, first.url)
	ctx := testContext(t)
	deployment := buildToolDeploymentFor(t, c, "slow.default", "sleep")
	running, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: deployment, WorkflowInput: p.Object{"ms": 3_000}})
	is.NoErr(err)
	is.Equal(running.Status, "running")
	files := func() []string {
		entries, err := os.ReadDir(filepath.Join(dir, "store"))
		is.NoErr(err)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	before := files()

	// On a free port, the store's lock refuses it; on the first one's
	// port, binding fails first. Either way it touches nothing.
	inUse := fmt.Sprintf("store %s is in use by another mcpflow (pid %d)", filepath.Join(dir, "store"), first.cmd.Process.Pid)
	for listen, want := range map[string]string{freeAddr(t): inUse, strings.TrimPrefix(first.httpBase(), "http://"): "address already in use"} {
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		out, err := exec.CommandContext(cctx, binary, "serve", "--config", cfgPath, "--listen", listen).CombinedOutput()
		cancel()
		t.Logf("second serve on %s: %v\n%s", listen, err, out)
		ee, ok := err.(*exec.ExitError)
		is.True(ok)                                  // the second serve exits by itself
		is.True(ee.ExitCode() != 0)                  // with an error
		is.True(strings.Contains(string(out), want)) // a clear one
	}

	is.Equal(files(), before) // the second serve created nothing in the store
	now, err := c.InspectRun(ctx, *running.RunID)
	is.NoErr(err)
	is.Equal(now.Status, "running") // the first instance's run was not touched
	end := settled(t, c, *running.RunID)
	is.Equal(end.Status, "completed") // and it goes on to complete
	list, err := c.ListRuns(ctx, p.ListRunsParams{})
	is.NoErr(err)
	is.Equal(list.Total, 1)
	is.True(slices.ContainsFunc(list.Runs, func(r p.RunSummary) bool { return r.RunID == *running.RunID }))
}

// TestShutdownSecondSignalStopsAtOnce: a second SIGTERM during the
// graceful stop (here draining a 60 s step) exits at once, saying so; the
// run stays as committed and is recovered at the next start.
func TestShutdownSecondSignalStopsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("shutdown test: starts and stops the real binary")
	}
	is := is.New(t)
	cfgPath := writeConfig(t, t.TempDir(), stdioSource("slow.default", fakeMCP))
	pr := startProcess(t, cfgPath, "first.log")
	c := dialURL(t, pr.url)
	deployment := buildToolDeploymentFor(t, c, "slow.default", "sleep")
	res, err := c.RunDeployment(testContext(t), p.StartRunParams{DeploymentID: deployment, WorkflowInput: p.Object{"ms": 60_000}})
	is.NoErr(err)
	is.Equal(res.Status, "running")
	// The start is answered once the run is created, before its step
	// (issue 27): the call is committed in flight once the session has it.
	poll.For(t, "the run's call in flight", 10*time.Second, func() bool { return callsInFlight(t, c)["slow.default"] == 1 })

	is.NoErr(pr.cmd.Process.Signal(syscall.SIGTERM)) // the first signal begins the stop
	poll.For(t, "the stop begins", 10*time.Second, func() bool {
		logs, err := os.ReadFile(pr.logs)
		is.NoErr(err)
		return strings.Contains(string(logs), "shutting down")
	})
	code, elapsed := pr.terminate(t) // the second
	t.Logf("second SIGTERM: exit %d after %s", code, elapsed.Round(time.Millisecond))
	is.Equal(code, 1)                // not a clean stop
	is.True(elapsed < 2*time.Second) // at once, not after the drain
	logs, err := os.ReadFile(pr.logs)
	is.NoErr(err)
	is.True(strings.Contains(string(logs), "second signal: stopping at once")) // it says so

	second := startProcess(t, cfgPath, "second.log")
	run := settled(t, dialURL(t, second.url), *res.RunID)
	is.Equal(run.Status, "failed") // recovered by the crash rules
}
