package config

import (
	"sort"
	"sync/atomic"
)

// Ownership of a configured connection toward the source registry
// (reference §3.2).
const (
	// OwnershipLocked (the default): the config owns the id. A registry
	// entry with the same id is ignored, and the registry refuses to add
	// one.
	OwnershipLocked = "locked"
	// OwnershipSeed: the config only seeds the registry. At start the
	// connection is written into the registry when the registry lacks its
	// id; from then on the registry entry wins.
	OwnershipSeed = "seed"
)

// IsLocked reports whether the config owns c's id outright (ownership
// "locked", the default).
func (c Connection) IsLocked() bool { return c.Ownership != OwnershipSeed }

// Merged is the effective set of connections: the config merged with the
// source registry by ownership.
type Merged struct {
	// Connections is the effective set, sorted by id: locked config
	// connections as configured, seed ones replaced by their registry
	// entry when there is one, then every registry-only entry.
	Connections []Connection
	// Seeds are the seed connections the registry lacks: what seeding
	// writes into it at start.
	Seeds []Connection
	// SeedEntryWins are the ids of seed connections whose registry entry
	// replaced the config's definition.
	SeedEntryWins []string
	// Shadowed are the ids of registry entries ignored because a locked
	// config connection owns the id.
	Shadowed []string
}

// Merge merges configured connections with registered ones (the source
// registry's entries as connections) by ownership. A seed connection
// replaced by its registry entry keeps the seed ownership. Neither input is
// modified.
func Merge(configured, registered []Connection) Merged {
	byID := make(map[string]Connection, len(registered))
	for _, r := range registered {
		byID[r.ID] = r
	}
	var m Merged
	taken := make(map[string]bool, len(configured))
	for _, c := range configured {
		taken[c.ID] = true
		r, inRegistry := byID[c.ID]
		switch {
		case c.IsLocked():
			if inRegistry {
				m.Shadowed = append(m.Shadowed, c.ID)
			}
			m.Connections = append(m.Connections, c)
		case inRegistry:
			r.Ownership = OwnershipSeed
			m.SeedEntryWins = append(m.SeedEntryWins, c.ID)
			m.Connections = append(m.Connections, r)
		default:
			m.Seeds = append(m.Seeds, c)
			m.Connections = append(m.Connections, c)
		}
	}
	for _, r := range registered {
		if !taken[r.ID] {
			m.Connections = append(m.Connections, r)
		}
	}
	sortByID(m.Connections)
	sortByID(m.Seeds)
	sort.Strings(m.SeedEntryWins)
	sort.Strings(m.Shadowed)
	return m
}

func sortByID(conns []Connection) {
	sort.Slice(conns, func(i, j int) bool { return conns[i].ID < conns[j].ID })
}

// View is the live set of effective connections: the configured ones, as
// the config file has them, and the effective set (config merged with the
// source registry), which an apply replaces as a whole. It is safe for
// concurrent use; readers get immutable snapshots and never wait.
type View struct {
	configured []Connection
	effective  atomic.Pointer[viewSet]
	sets       atomic.Uint64 // bumped after each Set has stored its set
}

type viewSet struct {
	list []Connection
	byID map[string]Connection
}

// NewView makes a view of configured connections whose effective set is,
// until Set, the configured one.
func NewView(configured []Connection) *View {
	v := &View{configured: append([]Connection(nil), configured...)}
	sortByID(v.configured)
	v.Set(v.configured)
	return v
}

// Configured returns the connections of the config file, sorted by id. The
// caller must not modify them.
func (v *View) Configured() []Connection { return v.configured }

// ConfiguredByID returns the configured connection id, if any.
func (v *View) ConfiguredByID(id string) (Connection, bool) {
	for _, c := range v.configured {
		if c.ID == id {
			return c, true
		}
	}
	return Connection{}, false
}

// All returns the effective connections, sorted by id: one snapshot that
// later Sets do not change. The caller must not modify it.
func (v *View) All() []Connection { return v.effective.Load().list }

// Get returns the effective connection id; a nil View has none.
func (v *View) Get(id string) (Connection, bool) {
	if v == nil {
		return Connection{}, false
	}
	c, ok := v.effective.Load().byID[id]
	return c, ok
}

// Enabled reports whether id names an enabled effective connection.
func (v *View) Enabled(id string) bool {
	c, ok := v.Get(id)
	return ok && c.IsEnabled()
}

// Set replaces the effective set.
func (v *View) Set(conns []Connection) {
	list := append([]Connection(nil), conns...)
	sortByID(list)
	byID := make(map[string]Connection, len(list))
	for _, c := range list {
		byID[c.ID] = c
	}
	v.effective.Store(&viewSet{list: list, byID: byID})
	v.sets.Add(1)
}

// Version changes after every Set, once its set is the one All and Get
// return: what was derived from the view while Version read v is stale
// once Version no longer reads v.
func (v *View) Version() uint64 { return v.sets.Load() }
