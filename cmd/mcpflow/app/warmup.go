package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/supervisor"
)

// warmUpLimit is the most new connections a start waits for: a larger
// set takes many rounds of the refresher, and the service serves at once
// while they are listed.
const warmUpLimit = 100

// warmUp queues the catalogs a start should list on refresher: first the
// enabled connections that have no catalog stored yet, then those whose
// stored catalog is stale (the registry serves the stored one meanwhile).
// When the new ones are at most warmUpLimit, it waits for them, at most
// wait, so that a small fresh service answers its first capabilities.list
// with them; whatever is still listing then (or when ctx ends) goes on in
// the background, and appears when it answers. Connections with a fresh
// stored catalog are left alone: their sessions open on first use.
func warmUp(ctx context.Context, refresher *supervisor.Refresher, conns []config.Connection, registry *catalog.Registry, wait time.Duration, now time.Time) {
	var missing, stale []string
	for _, c := range conns {
		if !c.IsEnabled() {
			continue
		}
		snap, ok := registry.Get(c.ID)
		switch {
		case !ok:
			missing = append(missing, c.ID)
		case isStale(snap, now):
			stale = append(stale, c.ID)
		}
	}
	listed := refresher.Refresh(missing...)
	refresher.Refresh(stale...)
	if len(missing)+len(stale) > 0 {
		slog.Info("listing catalogs in the background", "new", len(missing), "stale", len(stale))
	}
	if len(missing) == 0 || wait <= 0 {
		return
	}
	if len(missing) > warmUpLimit {
		slog.Info("warm-up: too many new catalogs to wait for; serving meanwhile", "new", len(missing), "limit", warmUpLimit)
		return
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-listed:
	case <-ctx.Done():
	case <-timer.C:
		slog.Warn("warm-up: still listing new catalogs; serving meanwhile", "waited", wait, "new", len(missing))
	}
}

// isStale reports whether snap is older than its max age (the default
// when it sets none) at now.
func isStale(snap catalog.Snapshot, now time.Time) bool {
	maxAge := time.Duration(snap.MaxAgeSeconds) * time.Second
	if maxAge <= 0 {
		maxAge = catalog.DefaultMaxAgeSeconds * time.Second
	}
	return now.Sub(time.UnixMilli(snap.FetchedAtEpochMs)) >= maxAge
}
