package app

import (
	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/schedules"
	"github.com/mcpflow/mcpflow/actors/store"
)

// startScheduler starts the scheduling loop over the store, starting its
// runs through the run manager; the service tells it of each change and
// triggers through it. Stop ends it first, before the runs stop being
// accepted.
func (a *App) startScheduler(observed store.Store, m *metrics.Metrics) {
	a.scheduler = schedules.Start(schedules.Options{Store: observed, Runs: schedules.ManagerRunner(a.runs, observed), Metrics: m})
	a.service.Schedules = a.scheduler
}
