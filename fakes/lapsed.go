package fakes

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// Lapsed is a cluster node whose membership lapsed, for the run
// manager's tests: a store decorator that refuses to create a run with
// store.ErrNotMember, as a cluster node's store does while the node does
// not hold its membership lease, and the node's WaitMember (runs.Member),
// which waits until the test calls Rejoin. From then on runs are created.
type Lapsed struct {
	store.Store
	refused atomic.Int64
	waiting chan struct{} // one send per WaitMember that waits
	joined  chan struct{} // closed by Rejoin
	once    sync.Once
}

// NewLapsed is s on a node that is not a member until Rejoin.
func NewLapsed(s store.Store) *Lapsed {
	return &Lapsed{Store: s, waiting: make(chan struct{}, 1), joined: make(chan struct{})}
}

// CreateRun refuses with store.ErrNotMember until Rejoin.
func (l *Lapsed) CreateRun(ctx context.Context, r store.Run, entries []workflow.TraceEntry) error {
	select {
	case <-l.joined:
		return l.Store.CreateRun(ctx, r, entries)
	default:
		l.refused.Add(1)
		return fmt.Errorf("create run %q: %w", r.ID, store.ErrNotMember)
	}
}

// WaitMember returns once Rejoin was called, or ctx's error; Waiting
// tells when it waits.
func (l *Lapsed) WaitMember(ctx context.Context) error {
	select {
	case <-l.joined:
		return nil
	default:
	}
	select {
	case l.waiting <- struct{}{}:
	default:
	}
	select {
	case <-l.joined:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Waiting is signalled when a WaitMember starts to wait.
func (l *Lapsed) Waiting() <-chan struct{} { return l.waiting }

// Rejoin makes the node a member again.
func (l *Lapsed) Rejoin() { l.once.Do(func() { close(l.joined) }) }

// Refused is how many runs CreateRun refused.
func (l *Lapsed) Refused() int { return int(l.refused.Load()) }
