package lease_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/cluster/lease"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// testKeeperHoldsOnlyALiveTenure asks Holds about a lease the keeper
// holds, about another epoch or key, and about the lease once released,
// past its deadline on the keeper's clock, and once the keeper stopped.
func testKeeperHoldsOnlyALiveTenure(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	f := startKeeper(t, srv, lease.KeeperOptions{TTL: time.Minute})
	l, err := f.keeper.Acquire(ctx, "conn")
	is.NoErr(err)
	is.True(f.keeper.Holds("conn", l.Epoch))    // its tenure
	is.True(!f.keeper.Holds("conn", l.Epoch-1)) // not an earlier one
	is.True(!f.keeper.Holds("conn", l.Epoch+1)) // nor a later one
	is.True(!f.keeper.Holds("other", l.Epoch))  // nor another key

	released, err := f.keeper.Acquire(ctx, "released")
	is.NoErr(err)
	is.NoErr(f.keeper.Release(ctx, "released"))
	is.True(!f.keeper.Holds("released", released.Epoch)) // released

	f.advance(t, f.ttl-f.ttl/5)
	is.True(!f.keeper.Holds("conn", l.Epoch)) // its deadline has come, whether or not Run gave it up yet
	is.Equal(f.loss(t).Lease, l)

	again, err := f.keeper.Acquire(ctx, "conn")
	is.NoErr(err)
	is.True(f.keeper.Holds("conn", again.Epoch)) // a new tenure
	is.NoErr(f.stop())
	is.True(!f.keeper.Holds("conn", again.Epoch)) // nothing renews it any more
}

// testKeeperTellsItsMetrics runs a keeper through acquisitions of each
// result, a renewal, a release, a lease given up and its stop, and reads
// what its Metrics were told.
func testKeeperTellsItsMetrics(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	m := &recordedMetrics{metricsSnapshot: metricsSnapshot{acquisitions: map[string]int{}}}
	f := startKeeper(t, srv, lease.KeeperOptions{TTL: time.Minute, Metrics: m})
	for _, key := range []string{"c1", "c2"} {
		_, err := f.keeper.Acquire(ctx, key)
		is.NoErr(err)
	}
	is.Equal(m.snapshot().held, 2)
	_, err := f.table.Acquire(ctx, "elsewhere", "node-b", time.Minute)
	is.NoErr(err)
	_, err = f.keeper.Acquire(ctx, "elsewhere")
	is.True(errors.Is(err, lease.ErrHeld))
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = f.keeper.Acquire(cancelled, "c3")
	is.True(err != nil)
	is.Equal(m.snapshot().acquisitions, map[string]int{lease.Acquired: 2, lease.HeldElsewhere: 1, lease.AcquireFailed: 1})

	f.advance(t, f.interval())
	poll.For(t, "a renewal", waitFor, func() bool { return m.snapshot().renewed == 1 })
	is.NoErr(f.keeper.Release(ctx, "c1"))
	is.Equal(m.snapshot().held, 1)

	f.advance(t, f.ttl-f.ttl/5) // c2's deadline since its renewal
	is.Equal(f.loss(t).Lease.Key, "c2")
	s := m.snapshot()
	is.Equal(s.lost, 1)
	is.Equal(s.held, 0)
	is.Equal(s.failed, 0) // no renewal failed

	_, err = f.keeper.Acquire(ctx, "c4")
	is.NoErr(err)
	is.Equal(m.snapshot().held, 1)
	is.NoErr(f.stop())
	is.Equal(m.snapshot().held, 0) // a stopped keeper keeps nothing
}

// recordedMetrics is a lease.Metrics that remembers what it was told.
type recordedMetrics struct {
	mu sync.Mutex
	metricsSnapshot
}

// metricsSnapshot is what recordedMetrics was told so far.
type metricsSnapshot struct {
	acquisitions    map[string]int
	renewed, failed int
	lost, held      int
}

func (m *recordedMetrics) LeaseAcquisition(result string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.acquisitions[result]++
}

func (m *recordedMetrics) LeaseRenewal(ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ok {
		m.renewed++
	} else {
		m.failed++
	}
}

func (m *recordedMetrics) LeasesLost(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lost += n
}

func (m *recordedMetrics) LeasesHeld(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.held = n
}

// snapshot copies what m was told.
func (m *recordedMetrics) snapshot() metricsSnapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.metricsSnapshot
	s.acquisitions = make(map[string]int, len(m.acquisitions))
	for k, v := range m.acquisitions {
		s.acquisitions[k] = v
	}
	return s
}
