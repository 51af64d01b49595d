package app

import "github.com/mcpflow/mcpflow/actors/metrics"

// withMetrics hands the App's metrics to every part that records them
// (session actors and the supervisor, the live event hub, the store it observes,
// retention, the edge, which serves them at /metrics) and returns them, for the run
// actors. They are the edge's if opts has them, else a registry of the
// App's own: never the global one, so that several Apps can run in one
// process.
func withMetrics(opts *Options) *metrics.Metrics {
	m := opts.Edge.Metrics
	if m == nil {
		m = metrics.New()
	}
	opts.Edge.Metrics, opts.Hub.Metrics, opts.Supervisor.Session.Metrics, opts.Retention.Metrics = m, m, m, m
	return m
}
