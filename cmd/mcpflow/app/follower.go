package app

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpflow/mcpflow/actors/sources"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
	"github.com/mcpflow/mcpflow/api/live"
	"github.com/mcpflow/mcpflow/api/service"
)

// followQueue bounds the changes waiting to be applied; past it they are
// dropped for one reload of everything.
const followQueue = 1024

// followTimeout bounds applying one change.
const followTimeout = 30 * time.Second

// change is a change another node made to what this node caches.
type change struct{ kind, id string }

// follower is what a cluster node's event listener tells of the other
// nodes' commits (postgres.Waker and postgres.ChangeWaker): the hub's
// feeds wake at once, and the changes to this node's caches (catalogs,
// prepared deployments, applied sources) are applied one at a time by
// the follower's own goroutine, so that the listener never blocks. After
// the listener reconnects, announcements may have been missed: everything
// is reloaded. The listener's first connection precedes the node's
// loading of its catalogs and sources, so it reloads nothing.
type follower struct {
	*live.Hub
	changes chan change

	connected chan struct{} // closed once the listener first connected

	mu     sync.Mutex
	missed bool // changes were dropped: reload everything
	wake   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

func newFollower(hub *live.Hub) *follower {
	return &follower{Hub: hub, changes: make(chan change, followQueue), connected: make(chan struct{}),
		wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// WakeChange implements postgres.ChangeWaker without blocking.
func (f *follower) WakeChange(kind, id string) {
	select {
	case f.changes <- change{kind, id}:
	default:
		f.reloadAll()
	}
}

// WakeAll implements postgres.Waker: the hub's feeds read again, and,
// after a reconnection, every cache is reloaded.
func (f *follower) WakeAll() {
	f.Hub.WakeAll()
	select {
	case <-f.connected:
		f.reloadAll()
	default:
		close(f.connected) // only the listener's goroutine calls WakeAll
	}
}

// reloadAll owes a reload of everything and wakes the goroutine.
func (f *follower) reloadAll() {
	f.mu.Lock()
	f.missed = true
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// start applies the changes to svc's caches (its prepared deployments,
// its sources) and to catalogs until stop.
func (f *follower) start(svc *service.Service, catalogs *sources.CatalogSink) {
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	go func() {
		defer close(f.done)
		for {
			select {
			case <-ctx.Done():
				return
			case c := <-f.changes:
				f.apply(ctx, svc, catalogs, c)
			case <-f.wake:
				f.mu.Lock()
				missed := f.missed
				f.missed = false
				f.mu.Unlock()
				if missed {
					f.apply(ctx, svc, catalogs, change{kind: "all"})
				}
			}
		}
	}()
}

// apply applies one change within followTimeout.
func (f *follower) apply(ctx context.Context, svc *service.Service, catalogs *sources.CatalogSink, c change) {
	ctx, cancel := context.WithTimeout(ctx, followTimeout)
	defer cancel()
	var err error
	switch c.kind {
	case postgres.ChangeCatalog:
		err = catalogs.Reload(ctx, c.id)
	case postgres.ChangeRecords:
		svc.RecordsChanged()
	case postgres.ChangeSources:
		err = svc.Sources.Follow(ctx)
	case "all":
		svc.RecordsChanged()
		err = catalogs.ReloadAll(ctx)
		if err == nil {
			err = svc.Sources.Follow(ctx)
		}
	}
	if err != nil {
		slog.Warn("a change another node made is not followed here", "kind", c.kind, "id", c.id, "err", err)
	}
}

// stop ends the goroutine within ctx.
func (f *follower) stop(ctx context.Context) {
	if f.cancel == nil {
		return
	}
	f.cancel()
	select {
	case <-f.done:
	case <-ctx.Done():
	}
}
