package metrics

import "github.com/prometheus/client_golang/prometheus"

// scheduleCollectors count the fires of schedules (actors/schedules).
type scheduleCollectors struct {
	fires *prometheus.CounterVec
}

func newScheduleCollectors() scheduleCollectors {
	return scheduleCollectors{
		fires: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "schedule_fires_total",
			Help: "Ticks of schedules, by outcome: started, deduplicated, buffered, skipped, missed (fired late, within the catch-up window), failed."},
			[]string{"outcome"}),
	}
}

func (c scheduleCollectors) collectors() []prometheus.Collector {
	return []prometheus.Collector{c.fires}
}

// ScheduleFire counts a schedule's tick by its outcome.
func (m *Metrics) ScheduleFire(outcome string) {
	if m == nil {
		return
	}
	m.schedules.fires.WithLabelValues(outcome).Inc()
}
