package service

import (
	"context"

	"github.com/mcpflow/mcpflow/actors/paging"
	"github.com/mcpflow/mcpflow/actors/sources"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// registryMethods are workflow.admin.source_registry.*: list, inspect,
// add, update, enable, disable, remove, apply.
func (s *Service) registryMethods() map[string]rpc.Method {
	return map[string]rpc.Method{
		protocol.MethodRegistryList:    forAdmin(s.listRegistry),
		protocol.MethodRegistryInspect: forAdmin(s.inspectRegistry),
		protocol.MethodRegistryAdd:     forAdmin(s.addRegistry),
		protocol.MethodRegistryUpdate:  forAdmin(s.updateRegistry),
		protocol.MethodRegistryEnable:  forAdmin(s.enableRegistry),
		protocol.MethodRegistryDisable: forAdmin(s.disableRegistry),
		protocol.MethodRegistryRemove:  forAdmin(s.removeRegistry),
		protocol.MethodRegistryApply:   forAdmin(s.applyRegistry),
	}
}

// The source registry's handlers: each decodes, calls s.Sources (which
// owns the registry, its apply and the effective sources) and projects
// the answer, showing no secret.

func (s *Service) listRegistry(ctx context.Context, p protocol.ListRegistryParams) (protocol.ListRegistryEntriesResult, error) {
	offset, limit, err := pageParams(p.Cursor, p.Limit, 50)
	if err != nil {
		return protocol.ListRegistryEntriesResult{}, err
	}
	entries, err := s.Sources.List(ctx)
	if err != nil {
		return protocol.ListRegistryEntriesResult{}, sourcesErr(err)
	}
	rows := make([]protocol.RegistryEntrySummary, 0, len(entries))
	for _, e := range entries {
		var kind *string
		if k, ok := e.Transport["kind"].(string); ok {
			kind = &k
		}
		rows = append(rows, protocol.RegistryEntrySummary{
			ID: e.ID, Kind: e.Kind, Enabled: e.Enabled, Provider: optional(e.Provider), Account: optional(e.Account),
			Profile: e.Profile, TransportKind: kind, AuthRef: e.AuthRef,
			ShadowedByConfig: e.Precedence.Shadowed, ConfigOwnership: optional(e.Precedence.Ownership), Mutable: e.Precedence.Mutable,
		})
	}
	page, next := paging.Cut(rows, offset, limit)
	return protocol.ListRegistryEntriesResult{Entries: page, NextCursor: next, Total: len(rows)}, nil
}

func (s *Service) inspectRegistry(ctx context.Context, p protocol.RegistrySourceParams) (protocol.InspectRegistryEntryResult, error) {
	e, err := s.Sources.Inspect(ctx, p.SourceID)
	if err != nil {
		return protocol.InspectRegistryEntryResult{}, sourcesErr(err)
	}
	return protocol.InspectRegistryEntryResult{Entry: entryPayload(e.RegistryEntry), ShadowedByConfig: e.Precedence.Shadowed,
		ConfigOwnership: optional(e.Precedence.Ownership), Mutable: e.Precedence.Mutable}, nil
}

func (s *Service) addRegistry(ctx context.Context, p protocol.AddRegistryEntryParams) (protocol.RegistryEntryMutationResult, error) {
	if p.Entry == nil {
		return protocol.RegistryEntryMutationResult{}, invalidParams("invalid params: missing required key \"entry\"")
	}
	return mutationResult(s.Sources.Add(ctx, p.Entry))
}

func (s *Service) updateRegistry(ctx context.Context, p protocol.UpdateRegistryEntryParams) (protocol.RegistryEntryMutationResult, error) {
	if p.Patch == nil {
		return protocol.RegistryEntryMutationResult{}, invalidParams("invalid params: missing required key \"patch\"")
	}
	return mutationResult(s.Sources.Update(ctx, p.SourceID, p.Patch))
}

func (s *Service) enableRegistry(ctx context.Context, p protocol.RegistrySourceParams) (protocol.RegistryEntryMutationResult, error) {
	return mutationResult(s.Sources.SetEnabled(ctx, p.SourceID, true))
}

func (s *Service) disableRegistry(ctx context.Context, p protocol.RegistrySourceParams) (protocol.RegistryEntryMutationResult, error) {
	return mutationResult(s.Sources.SetEnabled(ctx, p.SourceID, false))
}

// mutationResult projects the entry a mutation wrote.
func mutationResult(e sources.Entry, err error) (protocol.RegistryEntryMutationResult, error) {
	if err != nil {
		return protocol.RegistryEntryMutationResult{}, sourcesErr(err)
	}
	return protocol.RegistryEntryMutationResult{Entry: entryPayload(e.RegistryEntry), ShadowedByConfig: e.Precedence.Shadowed}, nil
}

func (s *Service) removeRegistry(ctx context.Context, p protocol.RegistrySourceParams) (protocol.RemoveRegistryEntryResult, error) {
	removed, err := s.Sources.Remove(ctx, p.SourceID)
	if err != nil {
		return protocol.RemoveRegistryEntryResult{}, sourcesErr(err)
	}
	return protocol.RemoveRegistryEntryResult{Removed: removed, SourceID: p.SourceID}, nil
}

func (s *Service) applyRegistry(ctx context.Context, _ protocol.Empty) (protocol.ApplyRegistryChangesResult, error) {
	done, err := s.Sources.Apply(ctx)
	if err != nil {
		return protocol.ApplyRegistryChangesResult{}, sourcesErr(err)
	}
	diags := make([]protocol.DependencyDiag, 0, len(done.Auth))
	for _, f := range done.Auth {
		id, hint := f.SourceID, f.Hint
		diags = append(diags, protocol.DependencyDiag{Severity: "error", Code: f.Code, LogicalRef: id, BoundSource: &id, Message: f.Message, RepairHint: &hint})
	}
	return protocol.ApplyRegistryChangesResult{
		Applied: true, Registered: done.Registered, Updated: done.Updated, Removed: done.Removed,
		ConnectionCount: done.Connections, RegistryEntryCount: done.Entries, AuthDiagnostics: diags,
	}, nil
}

// entryPayload shows an entry as the API does: its transport with only the
// names of env variables and headers.
func entryPayload(e store.RegistryEntry) protocol.RegistryEntry {
	metadata := e.Metadata
	if metadata == nil {
		metadata = protocol.Object{}
	}
	return protocol.RegistryEntry{
		ID: e.ID, Kind: e.Kind, Enabled: e.Enabled, Provider: optional(e.Provider), Account: optional(e.Account),
		Profile: e.Profile, Transport: sources.ShownTransport(e.Transport), AuthRef: e.AuthRef, Auth: e.Auth, Client: e.Client, Expose: e.Expose, Metadata: metadata,
	}
}
