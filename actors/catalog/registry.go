package catalog

import (
	"sort"
	"sync"
	"sync/atomic"
)

// Registry is the live view of each connection's latest snapshot. The
// supervisor writes it after a snapshot is stored; request handlers read it
// without touching the store. Reads are lock-free: a write replaces the
// whole map.
type Registry struct {
	mu    sync.Mutex // serialises writers
	snaps atomic.Pointer[map[string]Snapshot]
}

// NewRegistry starts a registry with snaps (the store's snapshots).
func NewRegistry(snaps []Snapshot) *Registry {
	m := make(map[string]Snapshot, len(snaps))
	for _, s := range snaps {
		m[s.ConnectionID] = s
	}
	r := &Registry{}
	r.snaps.Store(&m)
	return r
}

// Put replaces the snapshot of s.ConnectionID.
func (r *Registry) Put(s Snapshot) {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := *r.snaps.Load()
	m := make(map[string]Snapshot, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[s.ConnectionID] = s
	r.snaps.Store(&m)
}

// Get returns the snapshot of a connection.
func (r *Registry) Get(connectionID string) (Snapshot, bool) {
	s, ok := (*r.snaps.Load())[connectionID]
	return s, ok
}

// All returns every snapshot sorted by connection id. Snapshots are shared:
// callers must not modify them.
func (r *Registry) All() []Snapshot {
	m := *r.snaps.Load()
	out := make([]Snapshot, 0, len(m))
	for _, s := range m {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ConnectionID < out[j].ConnectionID })
	return out
}
