package metrics

import "github.com/prometheus/client_golang/prometheus"

// Results of a lease acquisition, the result label of
// mcpflow_cluster_lease_acquisitions_total; they are the values
// lease.KeeperOptions.Metrics is given.
const (
	LeaseAcquired      = "acquired"       // the node holds the key now
	LeaseHeldElsewhere = "held_elsewhere" // another node holds a live lease on it
	LeaseError         = "error"          // no answer: the database failed, or the keeper refused
)

// Results of a lease renewal, the result label of
// mcpflow_cluster_lease_renewals_total.
const (
	RenewalOK    = "ok"
	RenewalError = "error"
)

// clusterCollectors are the collectors of a cluster node: its membership,
// its leases, and the work it takes from or sends to other nodes.
type clusterCollectors struct {
	members      prometheus.Gauge
	leasesHeld   prometheus.Gauge
	acquisitions *prometheus.CounterVec
	renewals     *prometheus.CounterVec
	leasesLost   prometheus.Counter
	forwarded    *prometheus.CounterVec
	runsClaimed  prometheus.Counter
}

func newClusterCollectors() clusterCollectors {
	opts := func(name, help string) prometheus.Opts {
		return prometheus.Opts{Namespace: Namespace, Subsystem: "cluster", Name: name, Help: help}
	}
	c := clusterCollectors{
		members: prometheus.NewGauge(prometheus.GaugeOpts(opts("members",
			"Live members of the cluster this node sees, itself included."))),
		leasesHeld: prometheus.NewGauge(prometheus.GaugeOpts(opts("leases_held",
			"Ownership leases this node holds and keeps renewing."))),
		acquisitions: prometheus.NewCounterVec(prometheus.CounterOpts(opts("lease_acquisitions_total",
			"Lease acquisitions by this node, by result (acquired, held_elsewhere, error).")), []string{"result"}),
		renewals: prometheus.NewCounterVec(prometheus.CounterOpts(opts("lease_renewals_total",
			"Renewals of this node's leases, each one statement renewing every lease held, by result (ok, error).")), []string{"result"}),
		leasesLost: prometheus.NewCounter(prometheus.CounterOpts(opts("leases_lost_total",
			"Leases this node lost: a renewal found them ended, or they went unrenewed until their deadline."))),
		forwarded: prometheus.NewCounterVec(prometheus.CounterOpts(opts("forwarded_calls_total",
			"Calls sent to a session owned by another node, by that node.")), []string{"node"}),
		runsClaimed: prometheus.NewCounter(prometheus.CounterOpts(opts("runs_claimed_total",
			"Runs this node recovered from a node that died."))),
	}
	for _, result := range []string{LeaseAcquired, LeaseHeldElsewhere, LeaseError} {
		c.acquisitions.WithLabelValues(result) // every result shows, at 0, from the start
	}
	for _, result := range []string{RenewalOK, RenewalError} {
		c.renewals.WithLabelValues(result)
	}
	return c
}

// collectors lists what to register.
func (c clusterCollectors) collectors() []prometheus.Collector {
	return []prometheus.Collector{c.members, c.leasesHeld, c.acquisitions, c.renewals, c.leasesLost, c.forwarded, c.runsClaimed}
}

// ClusterMembers records how many live members the node sees.
func (m *Metrics) ClusterMembers(n int) {
	if m != nil {
		m.cluster.members.Set(float64(n))
	}
}

// LeasesHeld records how many leases the node holds.
func (m *Metrics) LeasesHeld(n int) {
	if m != nil {
		m.cluster.leasesHeld.Set(float64(n))
	}
}

// LeaseAcquisition counts an acquisition with its result: LeaseAcquired,
// LeaseHeldElsewhere or LeaseError (any other value counts as LeaseError).
func (m *Metrics) LeaseAcquisition(result string) {
	if m == nil {
		return
	}
	switch result {
	case LeaseAcquired, LeaseHeldElsewhere:
	default:
		result = LeaseError
	}
	m.cluster.acquisitions.WithLabelValues(result).Inc()
}

// LeaseRenewal counts a renewal of the node's leases, ok or failed.
func (m *Metrics) LeaseRenewal(ok bool) {
	if m == nil {
		return
	}
	result := RenewalError
	if ok {
		result = RenewalOK
	}
	m.cluster.renewals.WithLabelValues(result).Inc()
}

// LeasesLost counts n leases the node lost.
func (m *Metrics) LeasesLost(n int) {
	if m != nil {
		m.cluster.leasesLost.Add(float64(n))
	}
}

// ForwardedCall counts a call sent to a session that node owns.
func (m *Metrics) ForwardedCall(node string) {
	if m != nil {
		m.cluster.forwarded.WithLabelValues(node).Inc()
	}
}

// RunsClaimed counts n runs the node recovered from a dead node.
func (m *Metrics) RunsClaimed(n int) {
	if m != nil {
		m.cluster.runsClaimed.Add(float64(n))
	}
}
