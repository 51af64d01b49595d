package sources

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/store"
)

// CatalogSink is where the supervisor saves catalog snapshots: each is
// stored, published to the live registry that readers use, and what
// changed is recorded in the admin event log, however the snapshot was
// listed (a refresh, a list_changed notification, a stale catalog, a new
// session).
type CatalogSink struct {
	store    store.Store
	registry *catalog.Registry
}

// NewCatalogSink returns the sink over st that publishes to registry.
func NewCatalogSink(st store.Store, registry *catalog.Registry) *CatalogSink {
	return &CatalogSink{store: st, registry: registry}
}

// SaveCatalog stores snap, publishes it and records what changed.
func (k *CatalogSink) SaveCatalog(ctx context.Context, snap catalog.Snapshot) error {
	before, had := k.registry.Get(snap.ConnectionID)
	if err := k.store.SaveCatalog(ctx, snap); err != nil {
		return err
	}
	k.registry.Put(snap)
	var prev *catalog.Snapshot
	if had {
		prev = &before
	}
	k.changed(ctx, prev, snap)
	return nil
}

// Publish implements supervisor.Publisher: a snapshot another node of a
// cluster listed and stored joins the live registry, unless the registry
// has a later one; its events were that node's to record.
func (k *CatalogSink) Publish(snap catalog.Snapshot) {
	if have, ok := k.registry.Get(snap.ConnectionID); ok && have.FetchedAtEpochMs > snap.FetchedAtEpochMs {
		return
	}
	k.registry.Put(snap)
}

// GetCatalog and ListCatalogs read the store.
func (k *CatalogSink) GetCatalog(ctx context.Context, id string) (catalog.Snapshot, error) {
	return k.store.GetCatalog(ctx, id)
}

func (k *CatalogSink) ListCatalogs(ctx context.Context) ([]catalog.Snapshot, error) {
	return k.store.ListCatalogs(ctx)
}

// Reload reads connection id's catalog from the store into the live
// registry: another node of the cluster listed it.
func (k *CatalogSink) Reload(ctx context.Context, id string) error {
	snap, err := k.store.GetCatalog(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reload catalog %q: %w", id, err)
	}
	k.registry.Put(snap)
	return nil
}

// ReloadAll reads every catalog into the live registry: changes other
// nodes made may have been missed.
func (k *CatalogSink) ReloadAll(ctx context.Context) error {
	snaps, err := k.store.ListCatalogs(ctx)
	if err != nil {
		return fmt.Errorf("reload catalogs: %w", err)
	}
	for _, snap := range snaps {
		k.registry.Put(snap)
	}
	return nil
}

// changed records what changed between a connection's last stored
// catalog (nil for none) and the one just stored: tools_changed,
// resources_changed and prompts_changed, and drift for every changed or
// removed tool a deployment binds.
func (k *CatalogSink) changed(ctx context.Context, before *catalog.Snapshot, after catalog.Snapshot) {
	var old catalog.Snapshot
	if before != nil {
		old = *before
	}
	connectionID := after.ConnectionID
	for _, c := range []struct {
		kind             string
		before, after    map[string]string
		countKey, prefix string
	}{
		{audit.ToolsChanged, indexByKey(old.Tools, func(t catalog.Tool) string { return t.Name }), indexByKey(after.Tools, func(t catalog.Tool) string { return t.Name }), "node_count", connectionID + "."},
		{audit.ResourcesChanged, indexByKey(old.Resources, func(r catalog.Resource) string { return r.URI }), indexByKey(after.Resources, func(r catalog.Resource) string { return r.URI }), "resource_count", ""},
		{audit.ResourcesChanged, indexByKey(old.ResourceTemplates, func(r catalog.ResourceTemplate) string { return r.URITemplate }), indexByKey(after.ResourceTemplates, func(r catalog.ResourceTemplate) string { return r.URITemplate }), "template_count", ""},
		{audit.PromptsChanged, indexByKey(old.Prompts, func(p catalog.Prompt) string { return p.Name }), indexByKey(after.Prompts, func(p catalog.Prompt) string { return p.Name }), "prompt_count", connectionID + "."},
	} {
		added, removed, changed := diffNamed(c.before, c.after)
		if len(added)+len(removed)+len(changed) == 0 {
			continue
		}
		audit.Record(ctx, k.store, time.Now(), audit.Event{Kind: c.kind, ConnectionID: connectionID, Payload: map[string]any{
			"connection_id": connectionID, c.countKey: len(c.after),
			"added": withPrefix(c.prefix, added), "removed": withPrefix(c.prefix, removed), "changed": withPrefix(c.prefix, changed),
		}})
		if c.kind == audit.ToolsChanged && before != nil {
			k.drift(ctx, connectionID, withPrefix(c.prefix, append(removed, changed...)))
		}
	}
}

// drift records one capability_drift event per changed or removed tool
// of connectionID ("<connection>.<tool>" names) that deployments bind,
// naming them.
func (k *CatalogSink) drift(ctx context.Context, connectionID string, tools []string) {
	if len(tools) == 0 {
		return
	}
	deployments, err := k.store.ListDeployments(ctx)
	if err != nil {
		slog.Warn("drift not recorded", "connection", connectionID, "err", err)
		return
	}
	bound := map[string][]string{} // capability -> deployment ids
	for _, d := range deployments {
		a, err := k.store.GetArtifact(ctx, d.ArtifactID, d.ArtifactVersion)
		if err != nil {
			continue
		}
		for _, req := range a.RequiredCapabilities {
			for _, b := range d.Bindings {
				if b.LogicalSource == req.Ref.Source && b.ConcreteSource == connectionID {
					name := connectionID + "." + req.Ref.CapabilityKey
					bound[name] = append(bound[name], d.ID)
				}
			}
		}
	}
	for _, name := range tools {
		if ids := bound[name]; len(ids) > 0 {
			slices.Sort(ids)
			audit.Record(ctx, k.store, time.Now(), audit.Event{Kind: audit.CapabilityDrift, ConnectionID: connectionID, CapabilityID: name,
				Payload: map[string]any{"connection_id": connectionID, "capability": name, "deployments": slices.Compact(ids)}})
		}
	}
}
