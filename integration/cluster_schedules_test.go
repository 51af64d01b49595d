package integration

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/cluster/node"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// TestClusterFiresAOneSecondScheduleOncePerTickAcrossAKilledLeader: on a
// cluster of three nodes over PostgreSQL, a one-second schedule fires for
// 20 s while the node that fires it (the holder of the schedules lease)
// is SIGKILLed after about eight ticks. Another node takes the lease once
// it expires and fires the ticks missed meanwhile, within the catch-up
// window. Every tick of the first 20 has exactly one run, no run belongs
// to two ticks, and every run the schedule started is one of them. The
// ticks and their runs are read from the admin events of the fires
// (schedule_fired: tick and run id), replayed from the log's start.
func TestClusterFiresAOneSecondScheduleOncePerTickAcrossAKilledLeader(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	ids := []string{"a", "b", "c"}
	c := newTestCluster(t, clusterTTL)
	logsOnFailure(t, c)
	c.startAll(t, ids...)
	ctx := testContext(t)
	onA := c.client(t, "a")
	created := echoSchedule(t, onA, 1, 60)
	first := created.Schedule.NextFireTimes[0]

	leader := scheduleLeader(t, c, "a", "")
	poll.For(t, "8 fires before the kill", 20*time.Second, func() bool {
		var sc p.Schedule
		is.NoErr(onA.Call(ctx, p.MethodSchedulesInspect, p.ScheduleIDParams{ScheduleID: "tick"}, &sc))
		return sc.Fired >= 8
	})
	c.nodes[leader].kill(t)
	survivor := others(ids, leader)[0]
	next := scheduleLeader(t, c, survivor, leader)
	t.Logf("leader %s killed; %s took the schedules over", leader, next)

	on := c.client(t, survivor)
	fired := firedTicks(t, on, "tick", first, 20)
	var paused p.ScheduleResult
	is.NoErr(on.Call(ctx, p.MethodSchedulesPause, p.PauseScheduleParams{ScheduleID: "tick", Note: "test over"}, &paused))
	echo := "echo"
	limit := 100
	listed, err := on.ListRuns(ctx, p.ListRunsParams{DeploymentID: &echo, Limit: &limit})
	is.NoErr(err)
	fired.more(t, func() bool { // a fire's event follows its run's start
		return !slices.ContainsFunc(listed.Runs, func(r p.RunSummary) bool { return fired.tickOf[r.RunID] == 0 })
	})

	for _, r := range listed.Runs {
		is.Equal(r.StartedBy, "schedule:tick") // every run of the deployment is the schedule's
	}
	for i := range int64(20) {
		is.Equal(len(fired.runs[first+i*1000]), 1) // each of the first 20 ticks: one run, none lost
	}
	for tick, runs := range fired.runs {
		is.Equal(len(runs), 1) // no tick fired twice
		is.Equal(fired.tickOf[runs[0]], tick)
	}
	is.Equal(len(fired.tickOf), len(fired.runs)) // no run of two ticks
	is.Equal(len(listed.Runs), len(fired.runs))  // and no run besides
	t.Logf("%d ticks fired, %d runs, %d deduplicated fires (a tick fired again after the kill)",
		len(fired.runs), len(listed.Runs), fired.deduplicated)
}

// scheduleLeader waits until a live node other than not holds the
// schedules lease, as `mcpflow cluster status` on node on shows it, and
// returns it.
func scheduleLeader(t *testing.T, c *testCluster, on, not string) string {
	t.Helper()
	cli := cliTool{t: t}
	return poll.Value(t, "a node holding the schedules lease", 3*clusterTTL+10*time.Second, func() (string, bool) {
		res := cliJSON[clusterStatusJSON](t, cli.want(0, "cluster", "status", "--config", c.configOf(on), "-o", "json"))
		for _, l := range res.Leases {
			if l.Key == node.SchedulesKey && l.Live && l.Owner != not {
				return l.Owner, true
			}
		}
		return "", false
	})
}

// scheduleFires are the fires of a schedule read from the admin events:
// the runs of each tick (by its epoch ms) and how many fires were
// answered with the tick's run started before.
type scheduleFires struct {
	notes        <-chan client.Notification
	schedule     string
	runs         map[int64][]string // the runs of each tick
	tickOf       map[string]int64   // the tick of each run (the last seen)
	deduplicated int
}

// firedTicks follows the admin events of c from the log's start until
// the n ticks of schedule from first on have each been fired.
func firedTicks(t *testing.T, c *client.Client, schedule string, first int64, n int64) *scheduleFires {
	t.Helper()
	f := &scheduleFires{notes: notifications(c), schedule: schedule, runs: map[int64][]string{}, tickOf: map[string]int64{}}
	from := int64(0)
	_, err := c.SubscribeAdminEvents(testContext(t), p.SubscribeAdminEventsParams{AfterSequence: &from})
	is.New(t).NoErr(err)
	f.more(t, func() bool {
		for i := range n {
			if len(f.runs[first+i*1000]) == 0 {
				return false
			}
		}
		return true
	})
	return f
}

// more takes admin events until done holds, or fails the test after a
// deadline.
func (f *scheduleFires) more(t *testing.T, done func() bool) {
	t.Helper()
	is := is.New(t)
	takeAdminEvents(t, f.notes, 60*time.Second, fmt.Sprintf("the fires' admin events; seen: %v", f.runs), done, func(e p.AdminEventNotification) {
		if e.Kind != audit.ScheduleFired || e.Payload["schedule_id"] != f.schedule {
			return
		}
		run, _ := e.Payload["run_id"].(string)
		tick, err := strconv.ParseInt(jsonNumber(e.Payload["tick_epoch_ms"]), 10, 64)
		is.NoErr(err)
		if run == "" {
			return // a fire that started nothing (refused): no run to count
		}
		if e.Payload["outcome"] == "deduplicated" {
			f.deduplicated++
		}
		if !slices.Contains(f.runs[tick], run) {
			f.runs[tick] = append(f.runs[tick], run)
		}
		if prev, ok := f.tickOf[run]; ok && prev != tick {
			t.Logf("run %s fired for ticks %d and %d", run, prev, tick)
			is.Fail() // a run of one tick only
		}
		f.tickOf[run] = tick
	})
}

// jsonNumber is a number of a decoded JSON payload as text.
func jsonNumber(v any) string {
	switch n := v.(type) {
	case float64:
		return strconv.FormatFloat(n, 'f', -1, 64)
	case json.Number:
		return n.String()
	}
	return ""
}
