// Package metrics owns mcpflow's Prometheus metrics: one registry per
// service (never the global default, so that several services can run in
// one process), the collectors on it, and the hooks through which the
// actors (runs, sessions, the supervisor), the store wrapper, the live
// event hub, the edge, the cluster (membership, leases) and retention
// record what happens. docs/metrics.md lists every metric.
//
// Every hook is safe on a nil *Metrics, which records nothing: a caller
// that was not given metrics needs no checks.
//
// Labels stay bounded: no run id, subscription id, resource URI or client
// address ever becomes a label. Deployment, connection and tool labels
// come from configured records (deployments, sources and their catalogs),
// and method labels from the edge's method table (anything else is
// "other").
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every metric name.
const Namespace = "mcpflow"

// Label values with a fixed meaning.
const (
	// Other is the method label of a request whose method is not served.
	Other = "other"
	// Builtin is the connection label of a step run by a platform
	// built-in rather than on a connection.
	Builtin = "builtin"
	// ResourceRead is the tool label of a resource read.
	ResourceRead = "resources/read"
)

// Outcomes of a step or a tool call, the outcome label.
const (
	OutcomeOK     = "ok"     // the tool answered with a result
	OutcomeError  = "error"  // the tool answered with an error result
	OutcomeFailed = "failed" // no result: session lost, deadline, protocol error
)

// Histogram buckets, in seconds. Calls range from sub-millisecond
// (an open stdio session) to minutes (a slow tool); a commit from well
// under a millisecond to a slow disk's hundreds.
var (
	callBuckets   = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}
	commitBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}
)

// Metrics is one service's registry and collectors.
type Metrics struct {
	registry *prometheus.Registry

	runsStarted *prometheus.CounterVec
	runsEnded   *prometheus.CounterVec
	steps       *prometheus.HistogramVec
	toolCalls   *prometheus.HistogramVec

	sessionsOpen    *prometheus.GaugeVec
	connectFailures *prometheus.CounterVec
	reconnects      *prometheus.CounterVec
	restarts        *prometheus.CounterVec
	callsQueued     *prometheus.GaugeVec
	callsInFlight   *prometheus.GaugeVec

	websockets      prometheus.Gauge
	requests        *prometheus.CounterVec
	subscriptionLag *prometheus.CounterVec
	storeCommits    *prometheus.HistogramVec
	commitFailures  prometheus.Counter
	storeFull       prometheus.Gauge

	cluster   clusterCollectors
	retention retentionCollectors
	upstream  upstreamCollectors
	mcpFace   mcpFaceCollectors
	webhooks  webhookCollectors
	schedules scheduleCollectors
	audit     auditCollectors
}

// New returns metrics on a registry of their own, with the Go runtime and
// process collectors.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels)
	}
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help}, labels)
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: name, Help: help, Buckets: buckets}, labels)
	}
	m := &Metrics{
		registry: reg,

		runsStarted: counter("runs_started_total", "Workflow runs started, by deployment.", "deployment"),
		runsEnded: counter("runs_ended_total",
			"Workflow runs ended, by deployment and final status (completed, failed, cancelled).", "deployment", "status"),
		steps: histogram("step_duration_seconds",
			"Time from a step's first call to its result, retries and backoff included, by connection, tool and outcome.",
			callBuckets, "connection", "tool", "outcome"),
		toolCalls: histogram("tool_call_duration_seconds",
			"Time of one tool call or resource read on an upstream session, by connection, tool and outcome.",
			callBuckets, "connection", "tool", "outcome"),

		sessionsOpen:    gauge("sessions_open", "Upstream MCP sessions open, by connection.", "connection"),
		connectFailures: counter("session_connect_failures_total", "Failed connects to upstream MCP servers, by connection.", "connection"),
		reconnects: counter("session_reconnects_total",
			"Reconnects scheduled after a session died, a connect failed or a session actor crashed, by connection.", "connection"),
		restarts: counter("session_restarts_total",
			"Session actors that crashed and were replaced or stopped by the supervisor, by connection.", "connection"),
		callsQueued: gauge("session_calls_queued", "Calls waiting for a session or a free slot, by connection.", "connection"),
		callsInFlight: gauge("session_calls_in_flight",
			"Requests sent on upstream sessions and not answered yet (calls, reads, catalog listings), by connection.", "connection"),

		websockets: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "websocket_connections",
			Help: "WebSocket connections open on /ws."}),
		requests: counter("requests_total",
			`JSON-RPC requests answered (notifications included), by method ("other" when not served) and code ("ok" or the error code).`,
			"method", "code"),
		subscriptionLag: counter("subscription_lag_total",
			"Live event subscriptions ended by a lag notification, by topic (run, admin).", "topic"),
		storeCommits: histogram("store_commit_duration_seconds",
			"Time of the store writes live events follow, by operation (create_run, record_progress, append_run_events, append_event).",
			commitBuckets, "operation"),
		commitFailures: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "run_commit_failures_total",
			Help: "Commits of a run the store refused after the run was acknowledged (each is retried until one lands)."}),
		storeFull: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "store_full",
			Help: "1 while the store's disk is full (its last write failed for lack of space, or it started read-only), else 0."}),

		cluster:   newClusterCollectors(),
		retention: newRetentionCollectors(),
		upstream:  newUpstreamCollectors(),
		mcpFace:   newMCPFaceCollectors(),
		webhooks:  newWebhookCollectors(),
		schedules: newScheduleCollectors(),
		audit:     newAuditCollectors(),
	}
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.runsStarted, m.runsEnded, m.steps, m.toolCalls,
		m.sessionsOpen, m.connectFailures, m.reconnects, m.restarts, m.callsQueued, m.callsInFlight,
		m.websockets, m.requests, m.subscriptionLag, m.storeCommits, m.commitFailures, m.storeFull,
	)
	reg.MustRegister(m.cluster.collectors()...)
	reg.MustRegister(m.retention.collectors()...)
	reg.MustRegister(m.upstream.collectors()...)
	reg.MustRegister(m.mcpFace.collectors()...)
	reg.MustRegister(m.webhooks.collectors()...)
	reg.MustRegister(m.schedules.collectors()...)
	reg.MustRegister(m.audit.collectors()...)
	return m
}

// Registry is the registry the metrics are on; nil for nil metrics.
func (m *Metrics) Registry() *prometheus.Registry {
	if m == nil {
		return nil
	}
	return m.registry
}

// Handler serves the registry in the Prometheus text (or, when asked,
// OpenMetrics) format. Errors in collecting are served as HTTP 500.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry, EnableOpenMetrics: true})
}

// RunStarted counts a new run of deployment.
func (m *Metrics) RunStarted(deployment string) {
	if m != nil {
		m.runsStarted.WithLabelValues(deployment).Inc()
	}
}

// RunEnded counts a run of deployment that ended with status. Only the
// final statuses (completed, failed, cancelled) count: an interrupted run
// waits for its resume, a halted one for the next start.
func (m *Metrics) RunEnded(deployment, status string) {
	if m == nil {
		return
	}
	switch status {
	case "completed", "failed", "cancelled":
		m.runsEnded.WithLabelValues(deployment, status).Inc()
	}
}

// Step observes a step that took d from its first call to its result.
func (m *Metrics) Step(connection, tool, outcome string, d time.Duration) {
	if m != nil {
		m.steps.WithLabelValues(connection, tool, outcome).Observe(d.Seconds())
	}
}

// ToolCall observes one call (or resource read) on an upstream session.
func (m *Metrics) ToolCall(connection, tool, outcome string, d time.Duration) {
	if m != nil {
		m.toolCalls.WithLabelValues(connection, tool, outcome).Observe(d.Seconds())
	}
}

// ConnectFailed counts a failed connect on connection.
func (m *Metrics) ConnectFailed(connection string) {
	if m != nil {
		m.connectFailures.WithLabelValues(connection).Inc()
	}
}

// Reconnect counts a reconnect scheduled on connection.
func (m *Metrics) Reconnect(connection string) {
	if m != nil {
		m.reconnects.WithLabelValues(connection).Inc()
	}
}

// Restart counts a crashed session actor of connection.
func (m *Metrics) Restart(connection string) {
	if m != nil {
		m.restarts.WithLabelValues(connection).Inc()
	}
}

// WebSocketOpened counts a WebSocket connection open until the returned
// function is called (once).
func (m *Metrics) WebSocketOpened() (closed func()) {
	if m == nil {
		return func() {}
	}
	m.websockets.Inc()
	return m.websockets.Dec
}

// Request counts a request to method (already reduced to a served method
// or Other) answered with code.
func (m *Metrics) Request(method, code string) {
	if m != nil {
		m.requests.WithLabelValues(method, code).Inc()
	}
}

// SubscriptionLagged counts a subscription to topic ended by a lag
// notification.
func (m *Metrics) SubscriptionLagged(topic string) {
	if m != nil {
		m.subscriptionLag.WithLabelValues(topic).Inc()
	}
}

// StoreCommit starts timing a store write of operation; the returned
// function observes it.
func (m *Metrics) StoreCommit(operation string) (done func()) {
	if m == nil {
		return func() {}
	}
	start := time.Now()
	h := m.storeCommits.WithLabelValues(operation)
	return func() { h.Observe(time.Since(start).Seconds()) }
}

// RunCommitFailed counts a run's commit that the store refused and that
// the run retries.
func (m *Metrics) RunCommitFailed() {
	if m != nil {
		m.commitFailures.Inc()
	}
}

// StoreFull sets whether the store's disk is full.
func (m *Metrics) StoreFull(full bool) {
	if m == nil {
		return
	}
	v := 0.0
	if full {
		v = 1
	}
	m.storeFull.Set(v)
}

// OutcomeOf is the outcome label of a call's result: OutcomeFailed when
// it has no result (err), OutcomeError for a tool's error result, and
// OutcomeOK for any other.
func OutcomeOf(outcome string, err error) string {
	switch {
	case err != nil:
		return OutcomeFailed
	case outcome == OutcomeError:
		return OutcomeError
	}
	return OutcomeOK
}
