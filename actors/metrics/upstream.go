package metrics

import "github.com/prometheus/client_golang/prometheus"

// What became of a request an upstream server sent mcpflow as its client
// (elicitation/create, sampling/createMessage), the outcome label of
// mcpflow_upstream_requests_total.
const (
	// UpstreamInterrupted: handed to the run that made the call, as an
	// interrupt.
	UpstreamInterrupted = "interrupted"
	// UpstreamRefusedPolicy: the source's client block refuses it.
	UpstreamRefusedPolicy = "refused_policy"
	// UpstreamRefusedAmbiguous: several calls were in flight on the
	// session, and nothing told which one asked.
	UpstreamRefusedAmbiguous = "refused_ambiguous"
	// UpstreamRefusedNoCall: no call was in flight on the session.
	UpstreamRefusedNoCall = "refused_no_call"
	// UpstreamRefusedRun: the run did not take it (it was stopping, or
	// too many requests waited).
	UpstreamRefusedRun = "refused_run"
	// UpstreamRefusedNoClient: a sampling request the source forwards to
	// the MCP client that started the run (policy client), during a call
	// of a run that no such client started.
	UpstreamRefusedNoClient = "refused_no_client"
)

// What became of a notification an upstream sent during a session (the
// fate label of upstream_notifications_total).
const (
	// NoticeForwarded: handed to the run whose call it is about.
	NoticeForwarded = "forwarded"
	// NoticeUnknownCall: a progress whose token names no call in flight
	// (it ended, or the token is not one mcpflow sent).
	NoticeUnknownCall = "unknown_call"
	// NoticeUnfollowed: about a call whose caller takes no reports (a
	// direct capability call).
	NoticeUnfollowed = "unfollowed"
	// NoticeConnectionLog: a log message kept as the connection's, not a
	// call's (none or several calls were in flight).
	NoticeConnectionLog = "connection_log"
	// NoticeCoalesced: a progress a later one of the same call replaced
	// before the session actor took it.
	NoticeCoalesced = "coalesced"
	// NoticeDropped: more arrived than the session's pending bound before
	// the session actor took them.
	NoticeDropped = "dropped"
)

// What became of what a run's call reported (the fate label of
// run_live_events_total).
const (
	LiveStored    = "stored"    // appended to the run's event log
	LiveCoalesced = "coalesced" // a progress replaced by a later one of the same interval
	LiveDropped   = "dropped"   // a log past its step's cap, or a report after the call ended
)

// upstreamCollectors count what upstream servers send mcpflow as their
// client: requests (elicitation/create, sampling/createMessage) and
// notifications during calls (notifications/progress and
// notifications/message).
type upstreamCollectors struct {
	requests      *prometheus.CounterVec
	notifications *prometheus.CounterVec
	live          *prometheus.CounterVec
}

func newUpstreamCollectors() upstreamCollectors {
	return upstreamCollectors{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "upstream_requests_total",
			Help: "Requests an upstream server sent mcpflow as its client (kind elicitation or sampling), by what became of them: interrupted (the run that made the call was interrupted with it), refused_policy, refused_ambiguous (several calls in flight on the session), refused_no_call, refused_run, refused_no_client (policy client, and no MCP client that samples started the run)."},
			[]string{"connection", "kind", "outcome"}),
		notifications: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "upstream_notifications_total",
			Help: "Progress and log notifications from upstream sessions, by connection, kind (progress, log) and fate " +
				"(forwarded, unknown_call, unfollowed, connection_log, coalesced, dropped)."}, []string{"connection", "kind", "fate"}),
		live: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "run_live_events_total",
			Help: "Progress and log reports of runs' calls, by kind (step_progress, step_log) and fate (stored, coalesced, dropped)."},
			[]string{"kind", "fate"}),
	}
}

func (c upstreamCollectors) collectors() []prometheus.Collector {
	return []prometheus.Collector{c.requests, c.notifications, c.live}
}

// UpstreamRequest counts one request of kind (elicitation, sampling) that
// connection's server sent, by outcome (Upstream*).
func (m *Metrics) UpstreamRequest(connection, kind, outcome string) {
	if m != nil {
		m.upstream.requests.WithLabelValues(connection, kind, outcome).Inc()
	}
}

// UpstreamNotice counts n notifications of kind (progress, log) from
// connection's upstream, by fate.
func (m *Metrics) UpstreamNotice(connection, kind, fate string, n int) {
	if m != nil && n > 0 {
		m.upstream.notifications.WithLabelValues(connection, kind, fate).Add(float64(n))
	}
}

// LiveEvent counts n reports of runs' calls of kind (step_progress,
// step_log), by fate.
func (m *Metrics) LiveEvent(kind, fate string, n int) {
	if m != nil && n > 0 {
		m.upstream.live.WithLabelValues(kind, fate).Add(float64(n))
	}
}
