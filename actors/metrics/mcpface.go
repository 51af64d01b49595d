package metrics

import "github.com/prometheus/client_golang/prometheus"

// mcpFaceCollectors are the collectors of the MCP face's 2025-era
// sessions (api/mcpface).
type mcpFaceCollectors struct {
	sessions *prometheus.GaugeVec
	refused  *prometheus.CounterVec
	evicted  prometheus.Counter
}

func newMCPFaceCollectors() mcpFaceCollectors {
	return mcpFaceCollectors{
		sessions: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "mcp_sessions",
			Help: "2025-era MCP sessions open on /mcp, by token name."}, []string{"token"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "mcp_sessions_refused_total",
			Help: "New MCP sessions refused at a bound, by bound (token, server)."}, []string{"limit"}),
		evicted: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "mcp_sessions_evicted_total",
			Help: "Idle MCP sessions closed to make room for a new one at a bound."}),
	}
}

func (c mcpFaceCollectors) collectors() []prometheus.Collector {
	return []prometheus.Collector{c.sessions, c.refused, c.evicted}
}

// MCPSessions sets the 2025-era MCP sessions token holds open.
func (m *Metrics) MCPSessions(token string, n int) {
	if m != nil {
		m.mcpFace.sessions.WithLabelValues(token).Set(float64(n))
	}
}

// MCPSessionRefused counts a new MCP session refused at limit (token or
// server).
func (m *Metrics) MCPSessionRefused(limit string) {
	if m != nil {
		m.mcpFace.refused.WithLabelValues(limit).Inc()
	}
}

// MCPSessionEvicted counts an idle MCP session closed for a new one.
func (m *Metrics) MCPSessionEvicted() {
	if m != nil {
		m.mcpFace.evicted.Inc()
	}
}
