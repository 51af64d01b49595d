package metrics

import "github.com/prometheus/client_golang/prometheus"

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

// upstreamCollectors count what upstreams report during calls:
// notifications/progress and notifications/message.
type upstreamCollectors struct {
	notifications *prometheus.CounterVec
	live          *prometheus.CounterVec
}

func newUpstreamCollectors() upstreamCollectors {
	return upstreamCollectors{
		notifications: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "upstream_notifications_total",
			Help: "Progress and log notifications from upstream sessions, by connection, kind (progress, log) and fate " +
				"(forwarded, unknown_call, unfollowed, connection_log, coalesced, dropped)."}, []string{"connection", "kind", "fate"}),
		live: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "run_live_events_total",
			Help: "Progress and log reports of runs' calls, by kind (step_progress, step_log) and fate (stored, coalesced, dropped)."},
			[]string{"kind", "fate"}),
	}
}

func (c upstreamCollectors) collectors() []prometheus.Collector {
	return []prometheus.Collector{c.notifications, c.live}
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
