package sources

import (
	"fmt"
	"strings"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/jsonconv"
	"github.com/mcpflow/mcpflow/actors/store"
)

// KindMCP is the only kind of registry entry.
const KindMCP = "mcp"

// connectionOf turns a registry entry into the connection it asks for.
func connectionOf(e store.RegistryEntry) (config.Connection, error) {
	if e.Kind != KindMCP {
		return config.Connection{}, fmt.Errorf("registry entry %q: kind %q is not %q", e.ID, e.Kind, KindMCP)
	}
	var t config.Transport
	if err := jsonconv.Strict(e.Transport, &t); err != nil {
		return config.Connection{}, fmt.Errorf("registry entry %q: transport: %w", e.ID, err)
	}
	var auth *config.SourceAuth
	if e.Auth != nil {
		if err := jsonconv.Strict(e.Auth, &auth); err != nil {
			return config.Connection{}, fmt.Errorf("registry entry %q: auth: %w", e.ID, err)
		}
	}
	var client *config.Client
	if e.Client != nil {
		if err := jsonconv.Strict(e.Client, &client); err != nil {
			return config.Connection{}, fmt.Errorf("registry entry %q: client: %w", e.ID, err)
		}
	}
	var expose *config.MCPExpose
	if e.Expose != nil {
		if err := jsonconv.Strict(e.Expose, &expose); err != nil {
			return config.Connection{}, fmt.Errorf("registry entry %q: expose: %w", e.ID, err)
		}
	}
	enabled := e.Enabled
	c := config.Connection{
		Kind: KindMCP, ID: e.ID, Enabled: &enabled, Provider: e.Provider, Account: e.Account,
		Profile: e.Profile, Transport: t, AuthRef: e.AuthRef, Auth: auth, Client: client, Expose: expose, Metadata: e.Metadata,
	}
	if err := c.Validate(); err != nil {
		return config.Connection{}, fmt.Errorf("registry entry: %w", err)
	}
	return c, nil
}

// entryOf is the registry entry of a connection (seeding writes it).
func entryOf(c config.Connection) store.RegistryEntry {
	metadata := c.Metadata
	if metadata == nil {
		metadata = map[string]any{}
	}
	return store.RegistryEntry{
		ID: c.ID, Kind: KindMCP, Enabled: c.IsEnabled(), Provider: c.Server(), Account: c.AccountName(),
		Profile: c.Profile, Transport: transportObject(c.Transport), AuthRef: c.AuthRef, Auth: AuthObject(c.Auth), Client: ClientObject(c.Client),
		Expose: ExposeObject(c.Expose), Metadata: metadata,
	}
}

// ExposeObject is a source's expose block as stored: its JSON object,
// without the connection (the source's own id); nil for none.
func ExposeObject(e *config.MCPExpose) map[string]any {
	if e == nil {
		return nil
	}
	out := object("expose", e)
	delete(out, "connection") // the source's own id
	return out
}

// ClientObject is a source's client block as stored: its JSON object, nil
// for none.
func ClientObject(c *config.Client) map[string]any {
	if c == nil {
		return nil
	}
	return object("client", c)
}

// AuthObject is a source's auth as stored: its JSON object, nil for none.
// It holds no secret (kind, client id, scopes, redirect port).
func AuthObject(a *config.SourceAuth) map[string]any {
	if a == nil {
		return nil
	}
	return object("auth", a)
}

// transportObject is a transport as stored: its JSON object, empty fields
// left out.
func transportObject(t config.Transport) map[string]any { return object("transport", t) }

// object is block v (a source's client, auth, expose or transport) as
// the JSON object a registry entry stores. Its fields are strings, ints,
// bools and lists and maps of strings, which always encode: a failure is
// a bug.
func object(what string, v any) map[string]any {
	var out map[string]any
	if err := jsonconv.Strict(v, &out); err != nil {
		panic("sources: " + what + " as an object: " + err.Error())
	}
	return out
}

// transportAliases are the legacy names of the http transport kind the
// reference accepted (its sse mapped to streamable HTTP as well).
var transportAliases = map[string]string{"streamable_http": config.TransportHTTP, "streamable-http": config.TransportHTTP}

// entryDoc is the accepted form of a registry entry; unknown keys, here
// and in the transport, are malformed.
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
	Client    *config.Client     `json:"client"`
	Expose    *config.MCPExpose  `json:"expose"`
	Metadata  map[string]any     `json:"metadata"`
}

// parseEntry checks an entry document and returns the entry to store. A
// malformed document is ErrMalformed; a reserved id ErrRefused.
func parseEntry(doc map[string]any) (store.RegistryEntry, error) {
	var in entryDoc
	if err := jsonconv.Strict(doc, &in); err != nil {
		return store.RegistryEntry{}, fail(ErrMalformed, "entry: %w", err)
	}
	if config.IsReserved(in.ID) {
		return store.RegistryEntry{}, fail(ErrRefused, "source id %q is reserved for a built-in source", in.ID)
	}
	if err := config.ValidateID(in.ID); err != nil {
		return store.RegistryEntry{}, fail(ErrMalformed, "entry: %w", err)
	}
	if in.Kind != nil && *in.Kind != KindMCP {
		return store.RegistryEntry{}, fail(ErrMalformed, "entry %q: kind must be %q, got %q", in.ID, KindMCP, *in.Kind)
	}
	if in.Transport == nil {
		return store.RegistryEntry{}, fail(ErrMalformed, "entry %q needs a transport", in.ID)
	}
	t := *in.Transport
	if kind, ok := transportAliases[strings.ToLower(t.Kind)]; ok {
		t.Kind = kind
	}
	c := config.Connection{Kind: KindMCP, ID: in.ID, Enabled: in.Enabled, Profile: in.Profile, Transport: t, AuthRef: in.AuthRef, Auth: in.Auth, Client: in.Client,
		Expose: in.Expose, Metadata: in.Metadata}
	for _, part := range []*string{in.Provider, in.Account, in.AuthRef} {
		if part != nil && *part == "" {
			return store.RegistryEntry{}, fail(ErrMalformed, "entry %q: provider, account and auth_ref are null or not empty", in.ID)
		}
	}
	if in.Provider != nil {
		c.Provider = *in.Provider
	}
	if in.Account != nil {
		c.Account = *in.Account
	}
	if err := c.Validate(); err != nil {
		return store.RegistryEntry{}, fail(ErrMalformed, "entry: %w", err)
	}
	return entryOf(c), nil
}
