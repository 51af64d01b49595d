package app

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/supervisor"
)

// warmUp lists, through their sessions, the catalogs of enabled
// connections that have none stored yet, so a fresh service answers its
// first capabilities.list with them. It waits at most wait; a slower source
// goes on listing in the background (bounded by refresh) and its
// capabilities appear when it answers.
func warmUp(sup *supervisor.Handle, conns []config.Connection, registry *catalog.Registry, wait, refresh time.Duration) {
	var wg sync.WaitGroup
	for _, c := range conns {
		if _, ok := registry.Get(c.ID); ok || !c.IsEnabled() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), refresh)
			defer cancel()
			// A connection that did not connect was logged, once, by its session actor.
			if _, err := sup.RefreshCatalog(ctx, c.ID); err != nil && !errors.Is(err, session.ErrUnavailable) {
				slog.Warn("warm-up: catalog not listed", "connection", c.ID, "err", err)
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(wait):
		slog.Warn("warm-up: still listing catalogs; serving meanwhile", "waited", wait)
	}
}
