package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// pruneBuckets bound one prune batch, which holds the store's writer: a
// fraction of a millisecond to a slow disk's tens.
var pruneBuckets = []float64{.0001, .00025, .0005, .001, .002, .005, .01, .025, .05, .1}

// retentionCollectors are the collectors of the pruning of finished runs
// (actors/retention).
type retentionCollectors struct {
	runsPruned   prometheus.Counter
	batches      prometheus.Histogram
	pruneErrors  prometheus.Counter
	storeSize    prometheus.Gauge
	tombstonesGC prometheus.Counter
}

func newRetentionCollectors() retentionCollectors {
	return retentionCollectors{
		runsPruned: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "runs_pruned_total",
			Help: "Finished runs that retention deleted, with their traces and events."}),
		batches: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: "prune_batch_duration_seconds",
			Help: "Time of one prune batch, one store write (PostgreSQL: one transaction).", Buckets: pruneBuckets}),
		pruneErrors: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "prune_errors_total",
			Help: "Prune passes that a store error ended early; the next pass tries again."}),
		storeSize: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "store_size_bytes",
			Help: "The store's size: SQLite's database file and write-ahead log, or PostgreSQL's database; sampled once per prune pass."}),
		tombstonesGC: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "run_tombstones_dropped_total",
			Help: "Tombstones of pruned runs dropped once their own retention passed."}),
	}
}

func (c retentionCollectors) collectors() []prometheus.Collector {
	return []prometheus.Collector{c.runsPruned, c.batches, c.pruneErrors, c.storeSize, c.tombstonesGC}
}

// PruneBatch observes one prune batch that deleted n runs in d.
func (m *Metrics) PruneBatch(n int, d time.Duration) {
	if m != nil {
		m.retention.runsPruned.Add(float64(n))
		m.retention.batches.Observe(d.Seconds())
	}
}

// PruneFailed counts a prune pass that a store error ended.
func (m *Metrics) PruneFailed() {
	if m != nil {
		m.retention.pruneErrors.Inc()
	}
}

// TombstonesDropped counts n tombstones dropped.
func (m *Metrics) TombstonesDropped(n int) {
	if m != nil {
		m.retention.tombstonesGC.Add(float64(n))
	}
}

// StoreSize records the store's size in bytes.
func (m *Metrics) StoreSize(bytes int64) {
	if m != nil {
		m.retention.storeSize.Set(float64(bytes))
	}
}
