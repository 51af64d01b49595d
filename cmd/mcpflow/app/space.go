package app

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/store"
)

// diskSpace is what the App tells of its store's disk: whether its writes
// find space (store.Space, which the SQLite store the App opens reports
// to), and whether the store was opened read-only because its disk was
// full at start. A disk that fills is logged, counted in the store_full
// gauge and shown by /readyz (503 "store_full"); once a write succeeds
// again the gauge drops, /readyz is ready, and store_writable_again is
// appended to the admin event log. A read-only store stays so until a
// restart: /readyz answers 503 "read_only".
type diskSpace struct {
	space    *store.Space
	readOnly bool
	metrics  *metrics.Metrics
	// events is where store_writable_again goes (a store.Events): the
	// observed store, so that subscriptions see it, once the hub is up.
	events atomic.Value
}

// newDiskSpace is the disk space of a store not opened yet.
func newDiskSpace(m *metrics.Metrics) *diskSpace {
	d := &diskSpace{metrics: m}
	d.space = store.NewSpace(d.changed)
	return d
}

// changed is told by the store each time its disk fills or has room again.
func (d *diskSpace) changed(full bool, since time.Time) {
	d.metrics.StoreFull(full)
	if full {
		slog.Error("the store's disk is full: writes fail (runs hold their state and retry their commits), reads are still served; free space on it",
			"read_only", d.readOnly)
		return
	}
	took := time.Since(since)
	slog.Info("the store takes writes again", "full_for", took.Round(time.Millisecond))
	if events, ok := d.events.Load().(store.Events); ok {
		audit.Record(context.Background(), events, time.Now(), audit.Event{Kind: audit.StoreWritableAgain,
			Payload: map[string]any{"full_since_epoch_ms": since.UnixMilli(), "full_for_ms": took.Milliseconds()}})
	}
}

// status is what /readyz says of the store: "" when it writes, else
// "read_only" or "store_full".
func (d *diskSpace) status() string {
	switch full, _ := d.space.Full(); {
	case d.readOnly:
		return "read_only"
	case full:
		return "store_full"
	}
	return ""
}
