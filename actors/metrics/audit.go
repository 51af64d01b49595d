package metrics

import "github.com/prometheus/client_golang/prometheus"

// auditCollectors count the admin events not appended (actors/audit's
// Appender).
type auditCollectors struct {
	dropped *prometheus.CounterVec
}

func newAuditCollectors() auditCollectors {
	return auditCollectors{
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "admin_events_dropped_total",
			Help: "Admin events of direct calls and reads dropped before they were appended, by reason: queue_full (the queue stayed full, the store appending slower than events came), shutdown (the stop's deadline came first)."},
			[]string{"reason"}),
	}
}

func (c auditCollectors) collectors() []prometheus.Collector {
	return []prometheus.Collector{c.dropped}
}

// AdminEventDropped counts an admin event dropped, by reason.
func (m *Metrics) AdminEventDropped(reason string) {
	if m == nil {
		return
	}
	m.audit.dropped.WithLabelValues(reason).Inc()
}
