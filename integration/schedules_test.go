package integration

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// TestATwoSecondScheduleFiresPausesAndResumesThroughTheRealBinary: an
// every-2-seconds schedule created over the API fires at least 4 runs in
// 10 s, each started_by the schedule with its fixed input; inspect shows
// its next 5 fires and its last fire; pause stops it (no run starts over
// more than two intervals) and unpause resumes it.
func TestATwoSecondScheduleFiresPausesAndResumesThroughTheRealBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real binary")
	}
	t.Parallel()
	is := is.New(t)
	pr := startProcess(t, writeServerConfig(t, t.TempDir(), config.Server{}), "schedules.log")
	c := dialURL(t, pr.url)
	ctx := testContext(t)
	created := echoSchedule(t, c, 2, 0)
	is.Equal(len(created.Schedule.NextFireTimes), 5)
	is.Equal(created.Schedule.NextFireTimes[1]-created.Schedule.NextFireTimes[0], int64(2000))

	echo := "echo"
	runs := func() []p.RunSummary {
		res, err := c.ListRuns(ctx, p.ListRunsParams{DeploymentID: &echo})
		is.NoErr(err)
		return res.Runs
	}
	// The schedule records a fire once its run is committed: 4 fires
	// recorded are 4 runs listed.
	inspected := poll.Value(t, "4 fires", 10*time.Second, func() (p.Schedule, bool) {
		var sc p.Schedule
		is.NoErr(c.Call(ctx, p.MethodSchedulesInspect, p.ScheduleIDParams{ScheduleID: "tick"}, &sc))
		return sc, sc.Fired >= 4
	})
	listed := runs()
	is.True(len(listed) >= 4)
	for _, r := range listed {
		is.Equal(r.StartedBy, "schedule:tick")
	}
	is.True(inspected.LastFire != nil && inspected.LastFire.RunID != "")
	run, err := c.InspectRun(ctx, inspected.LastFire.RunID)
	is.NoErr(err)
	is.Equal(run.StartedBy, "schedule:tick")

	var paused p.ScheduleResult
	is.NoErr(c.Call(ctx, p.MethodSchedulesPause, p.PauseScheduleParams{ScheduleID: "tick", Note: "maintenance"}, &paused))
	is.True(paused.Schedule.Paused)
	is.Equal(paused.Schedule.Note, "maintenance")
	is.Equal(len(paused.Schedule.NextFireTimes), 0)
	before := len(runs())
	is.True(!poll.Until(5*time.Second, func() bool { return len(runs()) > before })) // two ticks and more pass: no run

	is.NoErr(c.Call(ctx, p.MethodSchedulesUnpause, p.ScheduleIDParams{ScheduleID: "tick"}, &paused))
	poll.For(t, "a run after unpause", 5*time.Second, func() bool { return len(runs()) > before })
}

// echoSchedule deploys echo through c and creates schedule "tick" of it:
// every interval seconds, allow_all, with a catch-up window of window
// seconds.
func echoSchedule(t *testing.T, c *client.Client, interval, window int) p.ScheduleResult {
	t.Helper()
	is := is.New(t)
	deployEcho(t, c)
	var created p.ScheduleResult
	is.NoErr(c.Call(testContext(t), p.MethodSchedulesCreate, p.ScheduleParams{Schedule: p.ScheduleDefinition{ID: "tick", DeploymentID: "echo",
		WorkflowInput: p.Object{"ref": "scheduled"}, Spec: p.ScheduleSpec{IntervalSeconds: interval}, Overlap: "allow_all",
		CatchupWindowSeconds: &window}}, &created))
	return created
}
