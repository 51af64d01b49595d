package sources

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/jsonconv"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor"
)

// Announcer tells the other nodes of a cluster that this node applied
// the source registry, which they must follow and the store cannot show.
type Announcer interface {
	SourcesApplied()
}

// Sources is the source registry of a node and its effective sources.
// Mutations and applies run one at a time, so an add's existence check
// and its write are one.
type Sources struct {
	store      store.Store
	view       *config.View
	supervisor *supervisor.Handle
	// Announce tells the other nodes of a cluster of each apply this
	// node makes; nil on a node alone. Set it before the first apply.
	Announce Announcer
	// MCP is the server.mcp block, whose expose entries an entry's
	// expose block may not clash with; nil for none.
	MCP *config.MCP

	mu sync.Mutex
}

// New returns the sources of st whose effective set view holds (as Load
// made it) and which sup reconciles its session actors to.
func New(st store.Store, view *config.View, sup *supervisor.Handle) *Sources {
	return &Sources{store: st, view: view, supervisor: sup}
}

// Precedence is what the config makes of a registry id.
type Precedence struct {
	// Shadowed says a configured connection has the id.
	Shadowed bool
	// Ownership is that connection's (config.OwnershipLocked or
	// config.OwnershipSeed); empty when not shadowed.
	Ownership string
	// Mutable says the registry may change the entry: not when the config
	// locks it.
	Mutable bool
}

// Entry is a registry entry with what the config makes of its id.
type Entry struct {
	store.RegistryEntry
	Precedence Precedence
}

// List returns every registry entry, in the store's order.
func (s *Sources) List(ctx context.Context) ([]Entry, error) {
	all, err := s.store.ListRegistryEntries(ctx)
	if err != nil {
		return nil, fail(ErrFailed, "list the source registry: %w", err)
	}
	out := make([]Entry, 0, len(all))
	for _, e := range all {
		out = append(out, s.entry(e))
	}
	return out, nil
}

// Inspect returns registry entry id.
func (s *Sources) Inspect(ctx context.Context, id string) (Entry, error) {
	e, err := s.read(ctx, id)
	if err != nil {
		return Entry{}, err
	}
	return s.entry(e), nil
}

// Add writes a new registry entry from its document: one the config does
// not lock, with an id not in the registry yet.
func (s *Sources) Add(ctx context.Context, doc map[string]any) (Entry, error) {
	e, err := parseEntry(doc)
	if err != nil {
		return Entry{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.view.ConfiguredByID(e.ID); ok && c.IsLocked() {
		return Entry{}, fail(ErrRefused, "source %q is owned by the config (ownership locked); the registry cannot add it", e.ID)
	}
	switch _, err := s.store.GetRegistryEntry(ctx, e.ID); {
	case err == nil:
		return Entry{}, fail(ErrRefused, "source registry entry %q already exists; update it instead", e.ID)
	case !errors.Is(err, store.ErrNotFound):
		return Entry{}, fail(ErrFailed, "read source registry entry %q: %w", e.ID, err)
	}
	return s.write(ctx, e)
}

// Update sets the keys of patch in entry id's document; the id itself
// cannot change.
func (s *Sources) Update(ctx context.Context, id string, patch map[string]any) (Entry, error) {
	return s.mutate(ctx, id, func(e store.RegistryEntry) (store.RegistryEntry, error) {
		doc := map[string]any{}
		if err := jsonconv.Strict(e, &doc); err != nil {
			return e, fail(ErrFailed, "source registry entry %q: %w", e.ID, err)
		}
		for k, v := range patch {
			if k == "id" && v != e.ID {
				return e, fail(ErrMalformed, "patch cannot change the id of %q", e.ID)
			}
			doc[k] = v
		}
		return parseEntry(doc)
	})
}

// SetEnabled enables or disables entry id.
func (s *Sources) SetEnabled(ctx context.Context, id string, enabled bool) (Entry, error) {
	return s.mutate(ctx, id, func(e store.RegistryEntry) (store.RegistryEntry, error) {
		e.Enabled = enabled
		return e, nil
	})
}

// Remove deletes entry id. An entry the config locks may be removed (it
// was ignored anyway); the next apply drops a registry-only source, while
// a seed-owned one falls back to its config definition.
func (s *Sources) Remove(ctx context.Context, id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.read(ctx, id); err != nil {
		return false, err
	}
	removed, err := s.store.DeleteRegistryEntry(ctx, id)
	if err != nil {
		return false, fail(ErrFailed, "remove source registry entry %q: %w", id, err)
	}
	return removed, nil
}

// mutate changes one entry the config does not lock.
func (s *Sources) mutate(ctx context.Context, id string, change func(store.RegistryEntry) (store.RegistryEntry, error)) (Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.read(ctx, id)
	if err != nil {
		return Entry{}, err
	}
	if !s.precedence(id).Mutable {
		return Entry{}, fail(ErrRefused, "source %q is owned by the config (ownership locked); its registry entry cannot change", id)
	}
	if e, err = change(e); err != nil {
		return Entry{}, err
	}
	return s.write(ctx, e)
}

func (s *Sources) write(ctx context.Context, e store.RegistryEntry) (Entry, error) {
	if err := s.checkExposures(ctx, e); err != nil {
		return Entry{}, err
	}
	if err := s.store.PutRegistryEntry(ctx, e); err != nil {
		return Entry{}, fail(ErrFailed, "write source registry entry %q: %w", e.ID, err)
	}
	return s.entry(e), nil
}

// read reads entry id; an unknown id is ErrUnknown.
func (s *Sources) read(ctx context.Context, id string) (store.RegistryEntry, error) {
	if id == "" {
		return store.RegistryEntry{}, fail(ErrMalformed, "missing required key \"source_id\"")
	}
	e, err := s.store.GetRegistryEntry(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.RegistryEntry{}, fail(ErrUnknown, "unknown source registry entry %q", id)
	case err != nil:
		return store.RegistryEntry{}, fail(ErrFailed, "read source registry entry %q: %w", id, err)
	}
	return e, nil
}

func (s *Sources) entry(e store.RegistryEntry) Entry {
	return Entry{RegistryEntry: e, Precedence: s.precedence(e.ID)}
}

// precedence says what the config makes of a registry id.
func (s *Sources) precedence(id string) Precedence {
	c, ok := s.view.ConfiguredByID(id)
	switch {
	case !ok:
		return Precedence{Mutable: true}
	case c.IsLocked():
		return Precedence{Shadowed: true, Ownership: config.OwnershipLocked}
	}
	return Precedence{Shadowed: true, Ownership: config.OwnershipSeed, Mutable: true}
}

// record appends e to the admin event log, stamped now.
func (s *Sources) record(ctx context.Context, e audit.Event) {
	audit.Record(ctx, s.store, time.Now(), e)
}

// checkExposures refuses an entry whose expose block would clash, once
// applied, with server.mcp.expose or another exposed source: a
// connection exposed twice, or a prefix two exposures share.
func (s *Sources) checkExposures(ctx context.Context, e store.RegistryEntry) error {
	if e.Expose == nil {
		return nil // withdrawing an exposure clashes with nothing
	}
	registered, _, err := registryConnections(ctx, s.store)
	if err != nil {
		return fail(ErrFailed, "%w", err)
	}
	c, err := connectionOf(e)
	if err != nil {
		return fail(ErrMalformed, "%w", err)
	}
	registered = slices.DeleteFunc(registered, func(r config.Connection) bool { return r.ID == e.ID })
	merged := config.Merge(s.view.Configured(), append(registered, c))
	if err := config.ValidateExposures(s.MCP, merged.Connections); err != nil {
		return fail(ErrRefused, "source registry entry %q: its expose block: %w", e.ID, err)
	}
	return nil
}
