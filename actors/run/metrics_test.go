package run_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/metrics/metricstest"
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
