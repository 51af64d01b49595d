package integration

import (
	"fmt"
	"maps"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
	"github.com/mcpflow/mcpflow/fakes/procs"
)

// Issue 27 item 8: a SIGTERM while long upstream calls are in flight.
const (
	stopWithin     = 12 * time.Second // the bound on one stop
	slowCallMS     = 40_000           // the HTTP call, far longer than any stop
	operationSecs  = 10               // server-everything's operation
	everythingConn = "everything.default"
	slowConn       = "slow.default"
)

// stopTries is how many stops in a row must each be clean: the issue's
// 20 where MCPFLOW_STOPS asks for them (.ci/run runs this test so, in a
// step of its own), else 4. Its 20 take some 150 s, and under CI's load
// they pushed the integration package past go test's 10-minute default
// in the README's go test ./...; under the race detector, which looks
// for data races rather than a rate of unclean stops, they took 180 s of
// CI's longest pass.
func stopTries(t *testing.T) int {
	v := os.Getenv("MCPFLOW_STOPS")
	if v == "" {
		return 4
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("MCPFLOW_STOPS=%q: want a number of stops, at least 1", v)
	}
	return n
}

// TestSIGTERMDuringLongUpstreamCallsExitsZeroEveryTime stops the real
// binary 20 times on one store, each time while a run waits on a 40 s
// call over streamable HTTP (fakemcp's sleep) and another on a 10 s
// trigger-long-running-operation of server-everything, a stdio server
// started through `sh -c`, so that mcpflow's reaper, the shell and node
// run below mcpflow. Every stop exits 0 within 12 s, and leaves no process
// that carried the source's marker in its environment. Each start
// recovers the runs the last stop cut off, each with the steps it had
// committed: the sleep, not safe to repeat, failed because the outcome of
// its call is unknown; the operation (safe to repeat) resumed, and is
// cancelled so that every stop meets the same two calls.
func TestSIGTERMDuringLongUpstreamCallsExitsZeroEveryTime(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("shutdown test: starts and stops the real binary 21 times")
	}
	node, script := everythingTS(t)
	is := is.New(t)
	dir := t.TempDir()
	slowAddr := freeAddr(t)
	startFakeHTTP(t, slowAddr)
	marker := fmt.Sprintf("MCPFLOW_STOP_TEST=%d", time.Now().UnixNano())
	// A command after node keeps the shell from exec'ing it: node is the
	// shell's child, the reaper's grandchild.
	everything := stdioSource(everythingConn, "sh", "-c", `"$NODE" "$SCRIPT" stdio; exit $?`)
	name, value, _ := strings.Cut(marker, "=")
	everything.Transport.Env = map[string]string{"NODE": node, "SCRIPT": script, name: value}
	cfgPath := writeConfig(t, dir, httpSource(slowConn, slowAddr), everything)
	t.Cleanup(func() { killMarked(t, marker) })

	var slowDeployment, opDeployment string
	var cut []cutOff // the runs the last stop cut off
	tries := stopTries(t)
	for try := range tries + 1 {
		pr := startProcess(t, cfgPath, fmt.Sprintf("serve%02d.log", try))
		c := dialURL(t, pr.url)
		if try == 0 {
			slowDeployment = buildToolDeploymentFor(t, c, slowConn, "sleep")
			opDeployment = buildEchoThenWait(t, c, everythingConn)
		}
		for _, run := range cut {
			run.check(t, pr, c)
		}
		if try == tries {
			break // this start only checked the last stop's runs
		}
		ctx := testContext(t)
		slow, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: slowDeployment, WorkflowInput: p.Object{"ms": slowCallMS}})
		is.NoErr(err)
		op, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: opDeployment, WorkflowInput: p.Object{"duration": operationSecs}})
		is.NoErr(err)
		cut = []cutOff{{id: *slow.RunID}, {id: *op.RunID, resumes: true, committed: []string{"greet"}}}
		poll.For(t, "both long calls in flight", 20*time.Second, func() bool {
			run, err := c.InspectRun(ctx, *op.RunID)
			is.NoErr(err)
			return run.TraceCount == 1 && maps.Equal(callsInFlight(t, c), map[string]int{slowConn: 1, everythingConn: 1})
		})
		below := procs.Marked(marker)
		if len(below) < 3 {
			t.Logf("marked: %v; statuses %+v", below, callsInFlight(t, c))
		}
		is.True(len(below) >= 3) // the reaper, the shell and node

		code, elapsed := pr.terminate(t)
		t.Logf("stop %d: exit %d after %s", try+1, code, elapsed.Round(time.Millisecond))
		is.Equal(code, 0)             // the stop lost nothing acknowledged
		is.True(elapsed < stopWithin) // within the 12 s
		left := procs.Marked(marker)
		if len(left) > 0 {
			t.Logf("stop %d left %v of %v running", try+1, left, below)
		}
		is.Equal(left, []int(nil)) // nothing below mcpflow outlives it
	}
}

// cutOff is a run a stop cut off mid-call.
type cutOff struct {
	id string
	// resumes is whether its call is safe to repeat, so that the next
	// start resumes it; otherwise it fails it.
	resumes bool
	// committed are the node ids of the steps it had committed, in order.
	committed []string
}

// check checks the run after the next start, pr: it is there with the
// steps it had committed, and the recovery resumed it (then it is
// cancelled) or failed it, the outcome of the call it had out being
// unknown.
func (r cutOff) check(t *testing.T, pr *process, c *client.Client) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	ctx := testContext(t)
	if r.resumes {
		is.True(resumedAfterTheStop(t, pr, r.id)) // the recovery resumed it
		var cancelled p.RunResult
		is.NoErr(c.Call(ctx, p.MethodRunsCancel, p.CancelRunParams{RunID: r.id}, &cancelled))
		is.Equal(cancelled.Status, "cancelled") // it was live again
		poll.For(t, "the cancelled call to end", 10*time.Second, func() bool { return len(callsInFlight(t, c)) == 0 })
	} else {
		run := settled(t, c, r.id)
		is.Equal(run.Status, "failed") // recovered by the existing rules
		is.True(run.Error != nil && strings.Contains(*run.Error, "the outcome of that step is unknown"))
	}
	var trace p.RunResult
	is.NoErr(c.Call(ctx, p.MethodRunsTrace, p.TraceParams{RunID: r.id, TraceRange: p.TraceRange{}}, &trace))
	is.Equal(len(trace.Trace), trace.TraceCount) // the trace reads back whole
	is.True(len(trace.Trace) >= len(r.committed))
	for i, node := range r.committed {
		is.Equal(trace.Trace[i].NodeID, node) // a step committed before the stop is kept
		is.Equal(trace.Trace[i].Outcome, "ok")
	}
}

// killMarked SIGKILLs what a failed test left of the processes carrying
// marker.
func killMarked(t *testing.T, marker string) {
	for _, pid := range procs.Marked(marker) {
		t.Logf("killing process %d left behind", pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// callsInFlight returns the calls in flight by connection, leaving out
// the connections with none.
func callsInFlight(t *testing.T, c *client.Client) map[string]int {
	t.Helper()
	statuses, err := c.GetConnectionStatuses(testContext(t))
	is.New(t).NoErr(err)
	flying := map[string]int{}
	for _, st := range statuses.Statuses {
		if st.Session.CallsInFlight > 0 {
			flying[st.ConnectionID] = st.Session.CallsInFlight
		}
	}
	return flying
}
