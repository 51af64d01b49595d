package node

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/mcpflow/mcpflow/actors/cluster/lease"
)

// SchedulesKey is the lease whose holder fires the cluster's schedules:
// one node at a time, so that a tick is fired once cluster-wide.
const SchedulesKey = "schedules/leader"

// SchedulesLeader is the node in the race for SchedulesKey
// (schedules.Leader). A node that does not hold the lease tries again
// every third of the ttl; the holder keeps it through the node's keeper,
// which gives it up before the database's expiry if it cannot renew it,
// so that two nodes never both believe they lead. A node killed while it
// leads is replaced once its lease expires, and the new leader fires the
// ticks missed meanwhile, within each schedule's catch-up window.
type SchedulesLeader struct {
	n     *Node
	mu    sync.Mutex
	epoch int64 // of the tenure last taken; 0 before the first
}

// SchedulesLeader returns the node's part in the race for SchedulesKey.
func (n *Node) SchedulesLeader() *SchedulesLeader { return &SchedulesLeader{n: n} }

// Lead reports whether the node leads, taking the lease if no node holds it.
func (l *SchedulesLeader) Lead(ctx context.Context) bool {
	if l.Leads() {
		return true
	}
	taken, err := l.n.keeper.Acquire(ctx, SchedulesKey)
	if err != nil {
		if !errors.Is(err, lease.ErrHeld) {
			l.n.log.Warn("take the schedules lease", "err", err)
		}
		return false
	}
	l.mu.Lock()
	l.epoch = taken.Epoch
	l.mu.Unlock()
	l.n.log.Info("this node fires the schedules", "epoch", taken.Epoch)
	return true
}

// Leads reports, reading no database, whether the node still holds the
// tenure it took: the fence checked before each fire and each write of a
// schedule's state.
func (l *SchedulesLeader) Leads() bool {
	l.mu.Lock()
	epoch := l.epoch
	l.mu.Unlock()
	return epoch != 0 && l.n.keeper.Holds(SchedulesKey, epoch)
}

// Interval is how often a node that does not lead tries again, and how
// often the leader reads the schedules again (another node may have
// changed them).
func (l *SchedulesLeader) Interval() time.Duration { return l.n.ttl / 3 }
