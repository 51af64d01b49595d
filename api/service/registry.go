package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/credentials"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// The source registry is desired state: add, update, enable, disable and
// remove write it; apply merges it with the config by ownership, makes the
// supervisor reconcile its session actors to the result and publishes it
// as the live view every handler reads. Mutations and applies run one at a
// time (registryMu), so an add's existence check and its write are one.

func (s *Service) listRegistry(ctx context.Context, p protocol.ListRegistryParams) (protocol.ListRegistryEntriesResult, error) {
	offset, limit, err := paging(p.Cursor, p.Limit, 50)
	if err != nil {
		return protocol.ListRegistryEntriesResult{}, err
	}
	entries, err := s.Store.ListRegistryEntries(ctx)
	if err != nil {
		return protocol.ListRegistryEntriesResult{}, upstream("list the source registry: %v", err)
	}
	rows := make([]protocol.RegistryEntrySummary, 0, len(entries))
	for _, e := range entries {
		shadowed, ownership, mutable := s.precedence(e.ID)
		var kind *string
		if k, ok := e.Transport["kind"].(string); ok {
			kind = &k
		}
		rows = append(rows, protocol.RegistryEntrySummary{
			ID: e.ID, Kind: e.Kind, Enabled: e.Enabled, Provider: optional(e.Provider), Account: optional(e.Account),
			Profile: e.Profile, TransportKind: kind, AuthRef: e.AuthRef,
			ShadowedByConfig: shadowed, ConfigOwnership: ownership, Mutable: mutable,
		})
	}
	page, next := pageOf(rows, offset, limit)
	return protocol.ListRegistryEntriesResult{Entries: page, NextCursor: next, Total: len(rows)}, nil
}

func (s *Service) inspectRegistry(ctx context.Context, p protocol.RegistrySourceParams) (protocol.InspectRegistryEntryResult, error) {
	e, err := s.registryEntry(ctx, p.SourceID)
	if err != nil {
		return protocol.InspectRegistryEntryResult{}, err
	}
	shadowed, ownership, mutable := s.precedence(e.ID)
	return protocol.InspectRegistryEntryResult{Entry: entryPayload(e), ShadowedByConfig: shadowed, ConfigOwnership: ownership, Mutable: mutable}, nil
}

func (s *Service) addRegistry(ctx context.Context, p protocol.AddRegistryEntryParams) (protocol.RegistryEntryMutationResult, error) {
	if p.Entry == nil {
		return protocol.RegistryEntryMutationResult{}, invalidParams("invalid params: missing required key \"entry\"")
	}
	e, err := parseEntry(p.Entry)
	if err != nil {
		return protocol.RegistryEntryMutationResult{}, err
	}
	s.registryMu.Lock()
	defer s.registryMu.Unlock()
	if c, ok := s.Connections.ConfiguredByID(e.ID); ok && c.IsLocked() {
		return protocol.RegistryEntryMutationResult{}, invalid("source %q is owned by the config (ownership locked); the registry cannot add it", e.ID)
	}
	switch _, err := s.Store.GetRegistryEntry(ctx, e.ID); {
	case err == nil:
		return protocol.RegistryEntryMutationResult{}, invalid("source registry entry %q already exists; update it instead", e.ID)
	case !errors.Is(err, store.ErrNotFound):
		return protocol.RegistryEntryMutationResult{}, upstream("read source registry entry %q: %v", e.ID, err)
	}
	return s.putRegistry(ctx, e)
}

func (s *Service) updateRegistry(ctx context.Context, p protocol.UpdateRegistryEntryParams) (protocol.RegistryEntryMutationResult, error) {
	if p.Patch == nil {
		return protocol.RegistryEntryMutationResult{}, invalidParams("invalid params: missing required key \"patch\"")
	}
	return s.mutateRegistry(ctx, p.SourceID, func(e store.RegistryEntry) (store.RegistryEntry, error) {
		doc := protocol.Object{}
		if err := remarshal(e, &doc); err != nil {
			return e, upstream("source registry entry %q: %v", e.ID, err)
		}
		for k, v := range p.Patch {
			if k == "id" && v != e.ID {
				return e, invalidParams("invalid params: patch cannot change the id of %q", e.ID)
			}
			doc[k] = v
		}
		return parseEntry(doc)
	})
}

func (s *Service) enableRegistry(ctx context.Context, p protocol.RegistrySourceParams) (protocol.RegistryEntryMutationResult, error) {
	return s.mutateRegistry(ctx, p.SourceID, func(e store.RegistryEntry) (store.RegistryEntry, error) {
		e.Enabled = true
		return e, nil
	})
}

func (s *Service) disableRegistry(ctx context.Context, p protocol.RegistrySourceParams) (protocol.RegistryEntryMutationResult, error) {
	return s.mutateRegistry(ctx, p.SourceID, func(e store.RegistryEntry) (store.RegistryEntry, error) {
		e.Enabled = false
		return e, nil
	})
}

// removeRegistry deletes an entry. An entry the config locks may be
// removed (it was ignored anyway); the next apply drops a registry-only
// source, while a seed-owned one falls back to its config definition.
func (s *Service) removeRegistry(ctx context.Context, p protocol.RegistrySourceParams) (protocol.RemoveRegistryEntryResult, error) {
	s.registryMu.Lock()
	defer s.registryMu.Unlock()
	if _, err := s.registryEntry(ctx, p.SourceID); err != nil {
		return protocol.RemoveRegistryEntryResult{}, err
	}
	removed, err := s.Store.DeleteRegistryEntry(ctx, p.SourceID)
	if err != nil {
		return protocol.RemoveRegistryEntryResult{}, upstream("remove source registry entry %q: %v", p.SourceID, err)
	}
	return protocol.RemoveRegistryEntryResult{Removed: removed, SourceID: p.SourceID}, nil
}

// applyRegistry reconciles the live connections with the registry: the
// supervisor starts, stops and replaces session actors, and once it has
// (removed sessions closed, their stdio process groups ended) the live
// view changes and the connection events are recorded.
func (s *Service) applyRegistry(ctx context.Context, _ protocol.Empty) (protocol.ApplyRegistryChangesResult, error) {
	s.registryMu.Lock()
	defer s.registryMu.Unlock()
	merged, done, entries, err := s.reconcileRegistry(ctx)
	if err != nil {
		return protocol.ApplyRegistryChangesResult{}, err
	}
	if s.Announce != nil {
		s.Announce.SourcesApplied() // the other nodes apply them too
	}
	s.recordMerge(ctx, merged)
	replaced := map[string]bool{}
	for _, id := range done.Replaced {
		replaced[id] = true
	}
	for _, id := range done.Registered {
		c, _ := s.connection(id)
		s.record(ctx, audit.Event{Kind: audit.ConnectionRegistered, ConnectionID: id, Payload: protocol.Object{"enabled": c.IsEnabled(), "transport_kind": c.Transport.Kind}})
	}
	for _, id := range done.Updated {
		c, _ := s.connection(id)
		s.record(ctx, audit.Event{Kind: audit.ConnectionUpdated, ConnectionID: id, Payload: protocol.Object{"enabled": c.IsEnabled(), "transport_kind": c.Transport.Kind, "session_replaced": replaced[id]}})
	}
	for _, id := range done.Removed {
		s.record(ctx, audit.Event{Kind: audit.ConnectionRemoved, ConnectionID: id})
	}
	return protocol.ApplyRegistryChangesResult{
		Applied: true, Registered: nonNil(done.Registered), Updated: nonNil(done.Updated), Removed: nonNil(done.Removed),
		ConnectionCount: len(merged.Connections), RegistryEntryCount: entries, AuthDiagnostics: s.authFindings(ctx, merged.Connections),
	}, nil
}

// reconcileRegistry makes the config merged with the source registry the
// supervisor's connections and the live view's. s.registryMu is held.
func (s *Service) reconcileRegistry(ctx context.Context) (config.Merged, supervisor.Reconciled, int, error) {
	registered, entries, err := registryConnections(ctx, s.Store)
	if err != nil {
		return config.Merged{}, supervisor.Reconciled{}, 0, upstream("%v", err)
	}
	merged := config.Merge(s.Connections.Configured(), registered)
	done, err := s.Supervisor.Reconcile(ctx, merged.Connections)
	// The supervisor applies what it was sent even when the wait ends
	// first: the view follows it either way.
	s.setConnections(merged.Connections)
	if err != nil {
		return config.Merged{}, supervisor.Reconciled{}, 0, upstream("apply the source registry: %v", err)
	}
	return merged, done, entries, nil
}

// authFindings checks, without reaching any server, that every enabled
// connection's auth record binds: an auth_ref naming no record, a scheme
// the transport does not take, or a payload its scheme cannot use.
func (s *Service) authFindings(ctx context.Context, conns []config.Connection) []protocol.DependencyDiag {
	binder := credentials.NewBinder(credentials.FromStore(s.Store))
	out := []protocol.DependencyDiag{}
	for _, c := range conns {
		if !c.IsEnabled() {
			continue
		}
		err := binder.Check(ctx, c)
		if err == nil {
			continue
		}
		ref, _ := credentials.Ref(c)
		code, hint := "auth_unreadable", "check the store"
		switch {
		case errors.Is(err, credentials.ErrNotFound):
			code, hint = credentials.CodeNotFound, fmt.Sprintf("save the auth record %q (workflow.admin.auth.save) or clear the source's auth_ref", ref)
		case errors.Is(err, credentials.ErrNotSupported):
			code, hint = credentials.CodeNotSupported, "save an auth record whose scheme the source's transport takes (http: bearer, headers, oauth_refresh_token, oauth; stdio: env)"
		case errors.Is(err, credentials.ErrInvalid):
			code, hint = "auth_invalid", fmt.Sprintf("save the auth record %q again with the payload its scheme needs", ref)
		}
		id := c.ID
		out = append(out, protocol.DependencyDiag{Severity: "error", Code: code, LogicalRef: id, BoundSource: &id, Message: err.Error(), RepairHint: &hint})
	}
	return out
}

// mutateRegistry changes one entry the config does not lock.
func (s *Service) mutateRegistry(ctx context.Context, id string, change func(store.RegistryEntry) (store.RegistryEntry, error)) (protocol.RegistryEntryMutationResult, error) {
	s.registryMu.Lock()
	defer s.registryMu.Unlock()
	e, err := s.registryEntry(ctx, id)
	if err != nil {
		return protocol.RegistryEntryMutationResult{}, err
	}
	if _, _, mutable := s.precedence(id); !mutable {
		return protocol.RegistryEntryMutationResult{}, invalid("source %q is owned by the config (ownership locked); its registry entry cannot change", id)
	}
	if e, err = change(e); err != nil {
		return protocol.RegistryEntryMutationResult{}, err
	}
	return s.putRegistry(ctx, e)
}

func (s *Service) putRegistry(ctx context.Context, e store.RegistryEntry) (protocol.RegistryEntryMutationResult, error) {
	if err := s.Store.PutRegistryEntry(ctx, e); err != nil {
		return protocol.RegistryEntryMutationResult{}, upstream("write source registry entry %q: %v", e.ID, err)
	}
	shadowed, _, _ := s.precedence(e.ID)
	return protocol.RegistryEntryMutationResult{Entry: entryPayload(e), ShadowedByConfig: shadowed}, nil
}

// registryEntry reads an entry; an unknown id is a KeyError.
func (s *Service) registryEntry(ctx context.Context, id string) (store.RegistryEntry, error) {
	if id == "" {
		return store.RegistryEntry{}, invalidParams("invalid params: missing required key \"source_id\"")
	}
	e, err := s.Store.GetRegistryEntry(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.RegistryEntry{}, notFound("unknown source registry entry %q", id)
	case err != nil:
		return store.RegistryEntry{}, upstream("read source registry entry %q: %v", id, err)
	}
	return e, nil
}

// precedence says what the config makes of a registry id: whether a
// configured connection has it, with which ownership, and whether the
// registry may change it (not when the config locks it).
func (s *Service) precedence(id string) (shadowed bool, ownership *string, mutable bool) {
	c, ok := s.Connections.ConfiguredByID(id)
	if !ok {
		return false, nil, true
	}
	own := config.OwnershipLocked
	if !c.IsLocked() {
		own = config.OwnershipSeed
	}
	return true, &own, !c.IsLocked()
}
