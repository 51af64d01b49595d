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
)

// upstreamCollectors count the requests upstream servers sent mcpflow.
type upstreamCollectors struct {
	requests *prometheus.CounterVec
}

func newUpstreamCollectors() upstreamCollectors {
	return upstreamCollectors{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "upstream_requests_total",
			Help: "Requests an upstream server sent mcpflow as its client (kind elicitation or sampling), by what became of them: interrupted (the run that made the call was interrupted with it), refused_policy, refused_ambiguous (several calls in flight on the session), refused_no_call, refused_run."},
			[]string{"connection", "kind", "outcome"}),
	}
}

func (c upstreamCollectors) collectors() []prometheus.Collector {
	return []prometheus.Collector{c.requests}
}

// UpstreamRequest counts one request of kind (elicitation, sampling) that
// connection's server sent, by outcome (Upstream*).
func (m *Metrics) UpstreamRequest(connection, kind, outcome string) {
	if m != nil {
		m.upstream.requests.WithLabelValues(connection, kind, outcome).Inc()
	}
}
