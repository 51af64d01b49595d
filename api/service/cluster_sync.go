package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/store"
)

// Announcer tells the other nodes of a cluster of a change this node made
// that they must follow and the store cannot see.
type Announcer interface {
	// SourcesApplied says this node applied the source registry.
	SourcesApplied()
}

// What a node of a cluster does when another node changed what this one
// caches (the store announces those changes; see the app's wiring):
// ReloadCatalog and ReloadCatalogs read catalogs into the live registry,
// RecordsChanged drops the deployments prepared from records another node
// wrote, and ApplySources applies the source registry another node
// applied.

// ReloadCatalog reads connection id's catalog from the store into the
// live registry: another node listed it.
func (s *Service) ReloadCatalog(ctx context.Context, id string) error {
	snap, err := s.Store.GetCatalog(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reload catalog %q: %w", id, err)
	}
	s.Catalogs.Put(snap)
	return nil
}

// ReloadCatalogs reads every catalog into the live registry: changes may
// have been missed.
func (s *Service) ReloadCatalogs(ctx context.Context) error {
	snaps, err := s.Store.ListCatalogs(ctx)
	if err != nil {
		return fmt.Errorf("reload catalogs: %w", err)
	}
	for _, snap := range snaps {
		s.Catalogs.Put(snap)
	}
	return nil
}

// RecordsChanged drops every prepared deployment: another node wrote a
// deployment or an artifact.
func (s *Service) RecordsChanged() { s.recordsChanged() }

// ApplySources applies the source registry as another node did, so that
// every node runs the same connections; the events were that node's to
// record.
func (s *Service) ApplySources(ctx context.Context) error {
	s.registryMu.Lock()
	defer s.registryMu.Unlock()
	_, _, _, err := s.reconcileRegistry(ctx)
	return err
}
