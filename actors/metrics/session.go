package metrics

import "github.com/prometheus/client_golang/prometheus"

// SessionGauges are one session actor's share of its connection's gauges
// (sessions open, calls in flight, calls queued). Several session actors
// share a connection (its shared session and the deployment's or run's
// own), so each adds what it holds and takes it back when it changes;
// an actor that stops reports zeros. Not safe for concurrent use: it
// belongs to the actor.
type SessionGauges struct {
	open, inFlight, queued prometheus.Gauge
	last                   [3]float64
}

// Session returns the gauges of one session actor of connection; nil
// (which records nothing) for nil metrics.
func (m *Metrics) Session(connection string) *SessionGauges {
	if m == nil {
		return nil
	}
	return &SessionGauges{
		open:     m.sessionsOpen.WithLabelValues(connection),
		inFlight: m.callsInFlight.WithLabelValues(connection),
		queued:   m.callsQueued.WithLabelValues(connection),
	}
}

// Set reports what the actor holds now.
func (g *SessionGauges) Set(open bool, inFlight, queued int) {
	if g == nil {
		return
	}
	now := [3]float64{0, float64(inFlight), float64(queued)}
	if open {
		now[0] = 1
	}
	for i, gauge := range []prometheus.Gauge{g.open, g.inFlight, g.queued} {
		if d := now[i] - g.last[i]; d != 0 {
			gauge.Add(d)
		}
	}
	g.last = now
}
