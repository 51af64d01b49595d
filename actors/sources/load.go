package sources

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store"
)

// Load builds the live view of the effective connections at start: it
// seeds the source registry with the seed-owned configured connections it
// lacks, merges the config with the registry by ownership (reference
// §3.2) and records what the merge decided in the admin event log.
func Load(ctx context.Context, st store.Store, configured []config.Connection) (*config.View, error) {
	view := config.NewView(configured)
	registered, _, err := registryConnections(ctx, st)
	if err != nil {
		return nil, err
	}
	merged := config.Merge(view.Configured(), registered)
	recordMerge(ctx, st, merged)
	for _, c := range merged.Seeds {
		e := entryOf(c)
		if err := st.PutRegistryEntry(ctx, e); err != nil {
			return nil, fmt.Errorf("seed the source registry with %q: %w", c.ID, err)
		}
		audit.Record(ctx, st, time.Now(), audit.Event{Kind: audit.RegistrySeeded, ConnectionID: c.ID,
			Payload: map[string]any{"enabled": e.Enabled, "transport_kind": c.Transport.Kind}})
		seeded, err := connectionOf(e)
		if err != nil {
			return nil, fmt.Errorf("seed the source registry with %q: %w", c.ID, err)
		}
		registered = append(registered, seeded)
	}
	if len(merged.Seeds) > 0 {
		// The seeded entries are the registry's now: merge again, so the
		// effective set is the one every later apply computes.
		merged = config.Merge(view.Configured(), registered)
	}
	view.Set(merged.Connections)
	return view, nil
}

// recordMerge records the ownership decisions of a merge: registry
// entries ignored because the config locks their id, and seed-owned
// connections whose registry entry wins.
func recordMerge(ctx context.Context, st store.Events, m config.Merged) {
	for _, id := range m.Shadowed {
		audit.Record(ctx, st, time.Now(), audit.Event{Kind: audit.RegistryIgnoredShadow, ConnectionID: id,
			Payload: map[string]any{"config_ownership": config.OwnershipLocked}})
	}
	for _, id := range m.SeedEntryWins {
		audit.Record(ctx, st, time.Now(), audit.Event{Kind: audit.RegistrySeedEntryWins, ConnectionID: id,
			Payload: map[string]any{"config_ownership": config.OwnershipSeed}})
	}
}

// registryConnections reads the registry's entries as connections. An
// entry that no longer parses (written by another version) is left out,
// with a warning; entries counts them all.
func registryConnections(ctx context.Context, st store.SourceRegistry) (conns []config.Connection, entries int, err error) {
	all, err := st.ListRegistryEntries(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("read the source registry: %w", err)
	}
	for _, e := range all {
		c, err := connectionOf(e)
		if err != nil {
			slog.Warn("source registry entry left out", "id", e.ID, "err", err)
			continue
		}
		conns = append(conns, c)
	}
	return conns, len(all), nil
}
