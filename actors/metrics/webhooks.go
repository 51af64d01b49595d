package metrics

import "github.com/prometheus/client_golang/prometheus"

// webhookCollectors count the deliveries of signed webhooks (api/hooks).
type webhookCollectors struct {
	deliveries *prometheus.CounterVec
	pruned     prometheus.Counter
}

func newWebhookCollectors() webhookCollectors {
	return webhookCollectors{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "webhook_deliveries_total",
			Help: "Deliveries to POST /hooks/<id>, by outcome: started, replayed, unsigned, bad_signature, stale, unknown_hook, too_large, rate_limited, bad_request, start_failed."},
			[]string{"outcome"}),
		pruned: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "webhook_deliveries_pruned_total",
			Help: "Delivery ids retention forgot once their dedup window passed."}),
	}
}

func (c webhookCollectors) collectors() []prometheus.Collector {
	return []prometheus.Collector{c.deliveries, c.pruned}
}

// WebhookDelivery counts a delivery by its outcome.
func (m *Metrics) WebhookDelivery(outcome string) {
	if m == nil {
		return
	}
	m.webhooks.deliveries.WithLabelValues(outcome).Inc()
}

// WebhookDeliveriesPruned counts the delivery ids a prune pass forgot.
func (m *Metrics) WebhookDeliveriesPruned(n int) {
	if m == nil || n == 0 {
		return
	}
	m.webhooks.pruned.Add(float64(n))
}
