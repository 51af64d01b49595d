package integration

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/client"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

// spinDraft is a workflow whose only step is a when routing to itself:
// pure steps that never wait on a call, which only the step budget, a
// cancel or the run deadline end. Each step compares input.a with
// input.b, so that a step costs what spinPad makes it.
const spinDraft = `{"name":"spin","start":"spin","outcomes":["ok"],
	"input_schema":{"type":"object","properties":{"a":{"type":"array"},"b":{"type":"array"}}},
	"steps":{"spin":{"when":{"if":{"op":"eq","left":{"path":"input.a"},"right":{"path":"input.b"}},"then":"spin"}}}}`

// spinPad is the input of a spin run whose steps each compare two lists
// of n numbers: with n in the hundreds they are slow enough that the
// ceiling's 100,000 take many seconds on any machine, so that a 1 s
// deadline ends the run, not its step budget.
func spinPad(n int) p.Object {
	a, b := make([]any, n), make([]any, n)
	for i := range a {
		a[i], b[i] = float64(i), float64(i)
	}
	return p.Object{"a": a, "b": b}
}

// loopRSSBound is the most the server may hold while it runs loops of
// pure steps (issue 27: it grew by about 300 MB/s).
const loopRSSBound = 300 << 20

// startSpin starts a run of deployment on spinPad(pad) without waiting
// for it, and checks that the start answers within 1 s, running; it
// returns the run's id.
func startSpin(t *testing.T, c *client.Client, deployment string, pad int) string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	began := time.Now()
	run, err := c.RunDeployment(testContext(t), p.StartRunParams{DeploymentID: deployment, WorkflowInput: spinPad(pad), Wait: ptr(false)})
	took := time.Since(began)
	is.NoErr(err) // the start answers
	t.Logf("wait:false start of %s answered in %s", deployment, took)
	is.True(took < time.Second) // within 1 s, whatever the loop does
	is.Equal(run.Status, "running")
	return *run.RunID
}

// TestALoopOfPureStepsIsBoundedThroughTheRealBinary: a workflow whose
// only step is a when routing to itself, deployed with a billion-step
// budget, is refused at save naming the ceiling; deployed at the ceiling,
// a wait:false start of it answers within 1 s, the run is listed as
// running, a cancel ends it within 1 s, another run fails at its
// deadline within 1 s of it, a third runs its 100,000 steps to its
// budget, and the server's RSS stays under 300 MB throughout.
func TestALoopOfPureStepsIsBoundedThroughTheRealBinary(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("starts the real binary")
	}
	is := is.New(t)
	pr := startProcess(t, writeServerConfig(t, t.TempDir(), config.Server{}), "loop.log")
	stop := make(chan struct{})
	var stopOnce sync.Once
	end := func() { stopOnce.Do(func() { close(stop) }) }
	t.Cleanup(end) // should the test end early
	peak := watchRSS(t, pr.cmd.Process.Pid, stop)
	c := dialURL(t, pr.url)
	ctx := testContext(t)
	saveArtifact(t, c, "spin", spinDraft, []string{"ok"})

	_, err := c.SaveDeployment(ctx, p.Object{"id": "spin.greedy", "artifact_id": "spin", "artifact_version": 1, "bindings": []any{},
		"limits": p.Object{"max_steps": 1_000_000_000, "run_timeout_seconds": 15}})
	var refused *jsonrpc.Error
	is.True(errors.As(err, &refused)) // a billion steps are refused at save
	t.Log(refused.Detail())
	is.Equal(refused.Code, -32602)                                                                                       // invalid params
	is.True(strings.Contains(refused.Detail(), "above this server's ceiling of 100000 steps (server.limits.max_steps)")) // naming the ceiling and its key

	for id, timeout := range map[string]int{"spin.cancel": 60, "spin.late": 1, "spin.full": 60} {
		_, err := c.SaveDeployment(ctx, p.Object{"id": id, "artifact_id": "spin", "artifact_version": 1, "bindings": []any{},
			"limits": p.Object{"max_steps": config.DefaultMaxSteps, "run_timeout_seconds": timeout}})
		is.NoErr(err) // the ceiling itself is accepted
	}

	// Cancelled: listed while it runs, and ended within 1 s of the cancel.
	id := startSpin(t, c, "spin.cancel", 0)
	listed, err := c.ListRuns(ctx, p.ListRunsParams{})
	is.NoErr(err)
	is.Equal(len(listed.Runs), 1)
	is.Equal(listed.Runs[0].RunID, id)
	is.Equal(listed.Runs[0].Status, "running") // the run is listed, running
	began := time.Now()
	cancelled, err := c.CancelRun(ctx, p.CancelRunParams{RunID: id})
	took := time.Since(began)
	is.NoErr(err)
	t.Logf("cancel answered in %s after %d steps", took, cancelled.TraceCount)
	is.Equal(cancelled.Status, "cancelled")
	is.True(took < time.Second)                            // ended within 1 s of the cancel
	is.True(cancelled.TraceCount < config.DefaultMaxSteps) // before its budget ran out

	// Failed at its deadline, within 1 s of it.
	began = time.Now()
	late := settled(t, c, startSpin(t, c, "spin.late", 1000))
	took = time.Since(began)
	t.Logf("late run ended after %s, %d steps: %s", took, late.TraceCount, deref(late.Error))
	is.Equal(late.Status, "failed")
	is.True(strings.HasPrefix(*late.Error, "run deadline ")) // its deadline ended it
	is.True(took < 2*time.Second)                            // within 1 s of its deadline, 1 s after its start

	// Run to its budget: 100,000 steps, whose trace the server does not
	// hold. A race-built server takes minutes over them, and its memory
	// is not what the race detector checks.
	if !raceDetector {
		full := settled(t, c, startSpin(t, c, "spin.full", 0))
		t.Logf("full run: %s", deref(full.Error))
		is.Equal(full.Status, "failed")
		is.True(strings.HasPrefix(*full.Error, "step budget exhausted: 100000 steps executed")) // its budget ended it
		is.Equal(full.TraceCount, config.DefaultMaxSteps)
	}

	end()
	most := <-peak
	t.Logf("peak RSS %d MiB", most>>20)
	is.True(most > 0) // the server's RSS was read
	is.True(most < loopRSSBound)
}
