package app

import (
	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/schedules"
	"github.com/mcpflow/mcpflow/actors/store"
)

// startScheduler starts the scheduling loop over the store, starting its
// runs through the run manager; the service tells it of each change and
// triggers through it. In a cluster, the node that holds the schedules
// lease fires the ticks. Stop ends it first, before the runs stop being
// accepted.
func (a *App) startScheduler(observed store.Store, m *metrics.Metrics) {
	opts := schedules.Options{Store: observed, Runs: schedules.ManagerRunner(a.runs, observed), Metrics: m}
	if a.member != nil {
		opts.Leader = a.member.node.SchedulesLeader() // one node fires each tick
	}
	a.scheduler = schedules.Start(opts)
	a.service.Schedules = a.scheduler
}
