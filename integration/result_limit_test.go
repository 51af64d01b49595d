package integration

import (
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes"
	"github.com/mcpflow/mcpflow/fakes/procs"
)

// rssBound is what mcpflow may hold while a 200 MB answer comes (issue
// 27: it passed 6 GB in 19 s).
const rssBound = 400 << 20

// watchRSS samples the resident memory of pid every few milliseconds
// until stop is closed, and sends the largest it saw. Past rssBound it
// kills pid at once, so that a server that holds the whole answer fails
// the test rather than the machine.
func watchRSS(t *testing.T, pid int, stop <-chan struct{}) <-chan int64 {
	peak := make(chan int64, 1)
	go func() {
		var most int64
		killed := false
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if u, err := procs.UsageOf(pid); err == nil {
				most = max(most, u.RSSBytes)
				if most > rssBound && !killed {
					killed = syscall.Kill(pid, syscall.SIGKILL) == nil
					t.Logf("mcpflow's RSS passed %d MiB (%d MiB): killed it", rssBound>>20, most>>20)
				}
			}
			select {
			case <-stop:
				peak <- most
				return
			case <-tick.C:
			}
		}
	}()
	return peak
}

func TestA200MBUpstreamResultFailsItsStepAsTooLargeAndTheNextCallSucceeds(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	upstream := httptest.NewServer(fakes.StreamHuge(fakes.NewHTTPHandler(func() *mcp.Server { return fakes.WithHuge(fakes.NewServer()) })))
	t.Cleanup(upstream.Close)
	const source = "big.default"
	pr := startProcess(t, writeConfig(t, t.TempDir(), httpSource(source, strings.TrimPrefix(upstream.URL, "http://"))), "mcpflow.log")
	c := dialURL(t, pr.url)
	deployment := buildToolDeploymentFor(t, c, source, fakes.HugeTool)

	if u, err := procs.UsageOf(pr.cmd.Process.Pid); err == nil {
		t.Logf("mcpflow's RSS before the call: %d MiB", u.RSSBytes>>20)
	}
	stop := make(chan struct{})
	peak := watchRSS(t, pr.cmd.Process.Pid, stop)
	started, err := c.RunDeployment(testContext(t), p.StartRunParams{DeploymentID: deployment, WorkflowInput: p.Object{"bytes": 200 << 20}})
	is.NoErr(err)
	run := waitRun(t, c, *started.RunID)
	close(stop)
	most := <-peak
	t.Logf("run %s: %s, %v; mcpflow's RSS peaked at %d MiB", *started.RunID, run.Status, deref(run.Error), most>>20)
	is.True(most < rssBound) // mcpflow never held the answer
	is.Equal(run.Status, "failed")
	is.True(run.Error != nil && strings.Contains(*run.Error, "result_too_large"))                    // the run fails as too large
	is.True(strings.Contains(*run.Error, `source "big.default" passed its limit of 16777216 bytes`)) // naming the source and the limit
	is.True(strings.Contains(*run.Error, "max_result_bytes"))                                        // and what to raise
	var traced p.RunResult
	is.NoErr(c.Call(testContext(t), p.MethodRunsTrace, p.TraceParams{RunID: *started.RunID}, &traced))
	is.Equal(traced.Error, run.Error) // runs.trace says so too (a failed step leaves no entry: the run's error is its record)

	next, err := c.RunDeployment(testContext(t), p.StartRunParams{DeploymentID: deployment, WorkflowInput: p.Object{"bytes": 1000}})
	is.NoErr(err)
	done := waitRun(t, c, *next.RunID)
	is.Equal(done.Status, "completed") // the next call on the same source succeeds
	is.Equal(len(done.Output["content"].([]any)[0].(map[string]any)["text"].(string)), 1000)
}
