package integration

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes"
)

// warmRunAllocsBound fails TestAWarmOneStepRunAllocatesWithinItsBound: a
// little above what a warm one-step run allocates today, so that the
// count only goes down. The figure counts every allocation of the
// process while the run goes through, the Go client and the in-process
// upstream included, not mcpflow's alone.
//
//	before issue 22 (2026-12-02, go1.26, no -race): 1149 allocations per run (three runs alike)
//	after it (2026-12-02, same machine):              880 (three runs alike; 0.77x)
//	issue 27's commit before the steps, issue 28's:   1036 (2026-12-07)
//	issue 32 so far (the journal, the session's reader): 1012 (three runs alike)
//	records encoded by segmentio's encoder (store.Marshal): 966
//	a fold's rows in its commit's inserts, admin events numbered by
//	LastInsertId, the guard a receiver rather than middleware:  904 (2026-12-08)
//	bound: just above 904, so that a regression does not pass unseen (issue 32 aims at 400)
const warmRunAllocsBound = 940

// warmRunSamples is how many runs the allocation count is averaged over.
const warmRunSamples = 200

// TestAWarmOneStepRunAllocatesWithinItsBound counts the allocations of a
// warm one-step workflow.runs.start through /ws: an in-process mcpflow
// on SQLite (sync full, in a temporary directory), the session to its
// in-memory upstream already open and the deployment already prepared by
// earlier runs. It drives the public method, so it keeps measuring the
// same thing however the run path below the edge is arranged.
func TestAWarmOneStepRunAllocatesWithinItsBound(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector's own allocations are not the run's")
	}
	is := is.New(t)
	allocs := warmRunAllocs(t)
	t.Logf("%.0f allocations per warm one-step run (bound %d)", allocs, warmRunAllocsBound)
	is.True(allocs <= warmRunAllocsBound) // a warm one-step run allocates no more than its bound
}

// warmRunAllocs starts the service, warms it with a few runs, and
// returns the mean allocations of warmRunSamples more.
func warmRunAllocs(t *testing.T) float64 {
	t.Helper()
	return testing.AllocsPerRun(warmRunSamples, warmOneStepRun(t))
}

// warmOneStepRun starts an in-process mcpflow with one source, its
// in-memory upstream, and a deployment of a one-step workflow calling its
// counter tool, warms it (warmRun) and returns its run.
func warmOneStepRun(t *testing.T) func() {
	t.Helper()
	svc := startService(t, session.Factories{config.TransportStdio: fakes.NewInMemory(nil)}, stdioSource("fixture.default", "in-memory"))
	return warmRun(t, svc, "fixture.default", 20)
}

// warmRun deploys a one-step workflow calling the counter tool of
// source connID on svc, runs it warmups times, so that the session is
// open, the deployment prepared and the pools full, and returns a
// function that runs it once more and fails the test unless the run
// completes.
func warmRun(t *testing.T, svc *service, connID string, warmups int) func() {
	t.Helper()
	is := is.New(t)
	c := svc.dial(t)
	deployment := buildCounterDeployment(t, c, connID)
	ctx := testContext(t)
	run := func() {
		r, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: deployment})
		is.NoErr(err)                   // the run is answered
		is.Equal(r.Status, "completed") // and completes
	}
	for range warmups {
		run()
	}
	return run
}
