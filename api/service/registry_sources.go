package service

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// sourceKindMCP is the only kind of registry entry.
const sourceKindMCP = "mcp"

// LoadSources builds the live view of the effective connections at start:
// it seeds the source registry with the seed-owned configured connections
// it lacks, merges the config with the registry by ownership (reference
// §3.2) and records what the merge decided in the admin event log.
func LoadSources(ctx context.Context, st store.Store, configured []config.Connection) (*config.View, error) {
	view := config.NewView(configured)
	registered, _, err := registryConnections(ctx, st)
	if err != nil {
		return nil, err
	}
	merged := config.Merge(view.Configured(), registered)
	log := &Service{Store: st}
	log.recordMerge(ctx, merged)
	for _, c := range merged.Seeds {
		e := entryOf(c)
		if err := st.PutRegistryEntry(ctx, e); err != nil {
			return nil, fmt.Errorf("seed the source registry with %q: %w", c.ID, err)
		}
		log.record(ctx, audit.Event{Kind: audit.RegistrySeeded, ConnectionID: c.ID, Payload: protocol.Object{"enabled": e.Enabled, "transport_kind": c.Transport.Kind}})
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
func (s *Service) recordMerge(ctx context.Context, m config.Merged) {
	for _, id := range m.Shadowed {
		s.record(ctx, audit.Event{Kind: audit.RegistryIgnoredShadow, ConnectionID: id, Payload: protocol.Object{"config_ownership": config.OwnershipLocked}})
	}
	for _, id := range m.SeedEntryWins {
		s.record(ctx, audit.Event{Kind: audit.RegistrySeedEntryWins, ConnectionID: id, Payload: protocol.Object{"config_ownership": config.OwnershipSeed}})
	}
}

// registryConnections reads the registry's entries as connections. An
// entry that no longer parses (written by another version) is left out,
// with a warning; bad lists their ids.
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

// connectionOf turns a registry entry into the connection it asks for.
func connectionOf(e store.RegistryEntry) (config.Connection, error) {
	if e.Kind != sourceKindMCP {
		return config.Connection{}, fmt.Errorf("registry entry %q: kind %q is not %q", e.ID, e.Kind, sourceKindMCP)
	}
	var t config.Transport
	if err := remarshal(e.Transport, &t); err != nil {
		return config.Connection{}, fmt.Errorf("registry entry %q: transport: %w", e.ID, err)
	}
	var auth *config.SourceAuth
	if e.Auth != nil {
		if err := remarshal(e.Auth, &auth); err != nil {
			return config.Connection{}, fmt.Errorf("registry entry %q: auth: %w", e.ID, err)
		}
	}
	enabled := e.Enabled
	c := config.Connection{
		Kind: sourceKindMCP, ID: e.ID, Enabled: &enabled, Provider: e.Provider, Account: e.Account,
		Profile: e.Profile, Transport: t, AuthRef: e.AuthRef, Auth: auth, Metadata: e.Metadata,
	}
	if err := c.Validate(); err != nil {
		return config.Connection{}, fmt.Errorf("registry entry: %w", err)
	}
	return c, nil
}

// entryOf is the registry entry of a connection (seeding writes it).
func entryOf(c config.Connection) store.RegistryEntry {
	return store.RegistryEntry{
		ID: c.ID, Kind: sourceKindMCP, Enabled: c.IsEnabled(), Provider: c.Server(), Account: c.AccountName(),
		Profile: c.Profile, Transport: transportObject(c.Transport), AuthRef: c.AuthRef, Auth: authObject(c.Auth), Metadata: orEmptyObject(c.Metadata),
	}
}

// authObject is a source's auth as stored: its JSON object, nil for none.
func authObject(a *config.SourceAuth) map[string]any {
	if a == nil {
		return nil
	}
	var out map[string]any
	if err := remarshal(a, &out); err != nil { // strings, ints and string lists always encode
		panic("service: auth as an object: " + err.Error())
	}
	return out
}

// transportObject is a transport as stored: its JSON object, empty fields
// left out.
func transportObject(t config.Transport) map[string]any {
	var out map[string]any
	if err := remarshal(t, &out); err != nil { // strings and string maps always encode
		panic("service: transport as an object: " + err.Error())
	}
	return out
}

func orEmptyObject(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// transportAliases are the legacy names of the http transport kind the
// reference accepted (its sse mapped to streamable HTTP as well).
var transportAliases = map[string]string{"streamable_http": config.TransportHTTP, "streamable-http": config.TransportHTTP}

// entryDoc is the accepted form of a registry entry; unknown keys, here
// and in the transport, are invalid params.
type entryDoc struct {
	ID        string             `json:"id"`
	Kind      *string            `json:"kind"`
	Enabled   *bool              `json:"enabled"`
	Provider  *string            `json:"provider"`
	Account   *string            `json:"account"`
	Profile   *string            `json:"profile"`
	Transport *config.Transport  `json:"transport"`
	AuthRef   *string            `json:"auth_ref"`
	Auth      *config.SourceAuth `json:"auth"`
	Metadata  map[string]any     `json:"metadata"`
}

// parseEntry checks an entry document and returns the entry to store. A
// malformed document is invalid params; a reserved id a ValueError.
func parseEntry(doc protocol.Object) (store.RegistryEntry, error) {
	var in entryDoc
	if err := remarshal(doc, &in); err != nil {
		return store.RegistryEntry{}, invalidParams("invalid params: entry: %v", err)
	}
	if config.IsReserved(in.ID) {
		return store.RegistryEntry{}, invalid("source id %q is reserved for a built-in source", in.ID)
	}
	if err := config.ValidateID(in.ID); err != nil {
		return store.RegistryEntry{}, invalidParams("invalid params: entry: %v", err)
	}
	if in.Kind != nil && *in.Kind != sourceKindMCP {
		return store.RegistryEntry{}, invalidParams("invalid params: entry %q: kind must be %q, got %q", in.ID, sourceKindMCP, *in.Kind)
	}
	if in.Transport == nil {
		return store.RegistryEntry{}, invalidParams("invalid params: entry %q needs a transport", in.ID)
	}
	t := *in.Transport
	if kind, ok := transportAliases[strings.ToLower(t.Kind)]; ok {
		t.Kind = kind
	}
	c := config.Connection{Kind: sourceKindMCP, ID: in.ID, Enabled: in.Enabled, Profile: in.Profile, Transport: t, AuthRef: in.AuthRef, Auth: in.Auth, Metadata: in.Metadata}
	c.Provider, c.Account = deref(in.Provider), deref(in.Account)
	for _, part := range []*string{in.Provider, in.Account, in.AuthRef} {
		if part != nil && *part == "" {
			return store.RegistryEntry{}, invalidParams("invalid params: entry %q: provider, account and auth_ref are null or not empty", in.ID)
		}
	}
	if err := c.Validate(); err != nil {
		return store.RegistryEntry{}, invalidParams("invalid params: entry: %v", err)
	}
	return entryOf(c), nil
}

// entryPayload shows an entry as the API does: its transport with only the
// names of env variables and headers.
func entryPayload(e store.RegistryEntry) protocol.RegistryEntry {
	return protocol.RegistryEntry{
		ID: e.ID, Kind: e.Kind, Enabled: e.Enabled, Provider: optional(e.Provider), Account: optional(e.Account),
		Profile: e.Profile, Transport: transportPayload(e.Transport), AuthRef: e.AuthRef, Auth: e.Auth, Metadata: orEmptyObject(e.Metadata),
	}
}

// transportPayload redacts a stored transport: env and headers become
// env_keys and header_keys, and the URL loses its userinfo and query
// values, as connections.list shows them.
func transportPayload(t map[string]any) protocol.Object {
	if t == nil {
		return nil
	}
	out := protocol.Object{}
	for k, v := range t {
		switch k {
		case "env":
			out["env_keys"] = keyNames(v)
		case "headers":
			out["header_keys"] = keyNames(v)
		case "url":
			raw, _ := v.(string)
			out[k] = config.ShowURL(raw)
		default:
			out[k] = v
		}
	}
	return out
}

func keyNames(v any) []string {
	m, _ := v.(map[string]any)
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
