package run_test

import (
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/metrics/metricstest"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

func TestRunsAreCountedAndTheirStepsTimed(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	w.start(t, "run-ok", w.plan(t, "echo"), workflow.Object{"message": "hi"})
	w.start(t, "run-fail", w.plan(t, "fail"), workflow.Object{})

	f := metricstest.Gather(t, w.metrics.Registry())
	started, _ := f.Value("mcpflow_runs_started_total", "deployment", "dep-1")
	is.Equal(started, 2.0)
	completed, _ := f.Value("mcpflow_runs_ended_total", "deployment", "dep-1", "status", "completed")
	is.Equal(completed, 1.0)
	failed, _ := f.Value("mcpflow_runs_ended_total", "deployment", "dep-1", "status", "failed")
	is.Equal(failed, 1.0)
	echo, _ := f.Value("mcpflow_step_duration_seconds", "connection", "fake.one", "tool", "echo", "outcome", "ok")
	is.Equal(echo, 1.0)
	fail, _ := f.Value("mcpflow_step_duration_seconds", "connection", "fake.one", "tool", "fail", "outcome", "error")
	is.Equal(fail, 1.0)
}

// TestARunWhoseCreationWasRefusedIsNotCounted: a run whose first commit
// the store refused, because another run holds its idempotency key, never
// existed: it is counted neither started nor ended, and its start is
// answered with the store's ErrKeyTaken.
func TestARunWhoseCreationWasRefusedIsNotCounted(t *testing.T) {
	is := is.New(t)
	w := newWorld(t)
	plan := w.plan(t, "echo")
	now := time.Now().UTC()
	keyed := func(id string) store.Run {
		return store.Run{ID: id, DeploymentID: "dep-1", ArtifactID: "art-1", ArtifactVersion: 1, Status: store.RunRunning,
			ResumeReadiness: "not_applicable", Input: workflow.Object{"message": "hi"}, CreatedAt: now, UpdatedAt: now,
			Idempotency: &store.RunIdempotency{Key: "k", InputHash: "h", ExpiresAt: now.Add(time.Hour)}}
	}
	first, _ := w.spawnRun(t, keyed("run-1"), plan, workflow.Options{}, nil)
	is.NoErr(first.Error.Err()) // the first run takes the key
	second := w.launchRecord(t, keyed("run-2"), plan, workflow.Options{}, time.Time{}, nil, nil)
	is.True(errors.Is(second.ack.Error.Err(), store.ErrKeyTaken)) // the second is refused
	second.stopped(t)

	f := metricstest.Gather(t, w.metrics.Registry())
	started, _ := f.Value("mcpflow_runs_started_total", "deployment", "dep-1")
	is.Equal(started, 1.0) // the first only
	completed, _ := f.Value("mcpflow_runs_ended_total", "deployment", "dep-1", "status", "completed")
	is.Equal(completed, 1.0)
	_, found := f.Value("mcpflow_runs_ended_total", "deployment", "dep-1", "status", "failed")
	is.True(!found) // the refused one did not fail: it never was
}
