// Package schedules runs the schedules (issue 31): it parses their specs
// (cron through robfig/cron/v3, or an interval), plans which ticks are due
// after a wake or a downtime (the catch-up window), applies the overlap
// policy against the schedule's last run, and starts each fire through
// the run manager with an idempotency key of its tick. The loop runs on
// an injected clock and is owned by the app, which stops it.
package schedules
