package metrics_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/cluster/lease"
	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/metrics/metricstest"
)

// A lease keeper takes *metrics.Metrics as its Metrics, and tells it the
// results the acquisitions are labelled with.
var _ lease.Metrics = (*metrics.Metrics)(nil)

func TestTheLeaseResultsAreTheLabels(t *testing.T) {
	is := is.New(t)
	is.Equal([]string{lease.Acquired, lease.HeldElsewhere, lease.AcquireFailed},
		[]string{metrics.LeaseAcquired, metrics.LeaseHeldElsewhere, metrics.LeaseError})
}

func TestClusterMetrics(t *testing.T) {
	is := is.New(t)
	m := metrics.New()
	f := metricstest.Gather(t, m.Registry())
	for _, result := range []string{"acquired", "held_elsewhere", "error"} {
		v, found := f.Value("mcpflow_cluster_lease_acquisitions_total", "result", result)
		is.True(found) // every result shows from the start
		is.Equal(v, 0.0)
	}
	_, found := f.Value("mcpflow_cluster_lease_renewals_total", "result", "error")
	is.True(found) // so that an alert on errors has a series to rate

	m.ClusterMembers(3)
	m.ClusterMembers(2) // a member left
	m.LeasesHeld(5)
	m.LeaseAcquisition(metrics.LeaseAcquired)
	m.LeaseAcquisition(metrics.LeaseAcquired)
	m.LeaseAcquisition(metrics.LeaseHeldElsewhere)
	m.LeaseAcquisition("surprise") // an error
	m.LeaseRenewal(true)
	m.LeaseRenewal(false)
	m.LeasesLost(4)
	m.ForwardedCall("node-b")
	m.ForwardedCall("node-b")
	m.ForwardedCall("node-c")
	m.RunsClaimed(7)

	f = metricstest.Gather(t, m.Registry())
	value := func(name string, labels ...string) float64 {
		v, found := f.Value(name, labels...)
		is.True(found) // the series exists
		return v
	}
	is.Equal(value("mcpflow_cluster_members"), 2.0)
	is.Equal(f.Type("mcpflow_cluster_members"), "GAUGE")
	is.Equal(value("mcpflow_cluster_leases_held"), 5.0)
	is.Equal(value("mcpflow_cluster_lease_acquisitions_total", "result", "acquired"), 2.0)
	is.Equal(value("mcpflow_cluster_lease_acquisitions_total", "result", "held_elsewhere"), 1.0)
	is.Equal(value("mcpflow_cluster_lease_acquisitions_total", "result", "error"), 1.0)
	is.Equal(len(f.LabelValues("mcpflow_cluster_lease_acquisitions_total", "result")), 3) // no other result
	is.Equal(value("mcpflow_cluster_lease_renewals_total", "result", "ok"), 1.0)
	is.Equal(value("mcpflow_cluster_lease_renewals_total", "result", "error"), 1.0)
	is.Equal(value("mcpflow_cluster_leases_lost_total"), 4.0)
	is.Equal(f.Type("mcpflow_cluster_leases_lost_total"), "COUNTER")
	is.Equal(value("mcpflow_cluster_forwarded_calls_total", "node", "node-b"), 2.0)
	is.Equal(value("mcpflow_cluster_forwarded_calls_total", "node", "node-c"), 1.0)
	is.Equal(value("mcpflow_cluster_runs_claimed_total"), 7.0)
}
