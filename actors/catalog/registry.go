package catalog

import (
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
)

// Registry is the live view of each connection's latest snapshot, indexed
// by connection id and, within a connection, by tool name. The supervisor
// writes it after a snapshot is stored; request handlers read it without
// touching the store.
//
// Reads are lock-free and see one consistent version: the connections
// are a persistent search tree (a treap) behind an atomic pointer, so a
// Put copies only the path to the one connection it replaces (O(log n)
// nodes) and never the other connections' entries.
type Registry struct {
	mu   sync.Mutex // serialises writers
	root atomic.Pointer[node]
	seed maphash.Seed // node priorities: a treap balanced by hashes of ids
	// version counts the Puts, each counted once its tree is visible.
	version atomic.Uint64
	// shared holds the decoded catalogs of the current version by content
	// key: connections whose catalogs are identical hold one copy (see
	// content). Guarded by mu.
	shared map[string]*content
}

// entry is one connection's snapshot with its content: the tools,
// resources and prompts, their capabilities and index, built once and
// shared with every connection that lists the same catalog. A capability
// gets its connection's name when it is read. Entries are never modified.
type entry struct {
	snap Snapshot
	c    *content
}

func newEntry(s Snapshot, c *content) *entry {
	s.Tools, s.Resources, s.Prompts, s.ResourceTemplates = c.tools, c.resources, c.prompts, c.templates
	return &entry{snap: s, c: c}
}

// node is one connection of the treap: ordered by id, a max-heap on prio.
type node struct {
	e           *entry
	prio        uint64
	left, right *node
}

// NewRegistry starts a registry with snaps (the store's snapshots).
func NewRegistry(snaps []Snapshot) *Registry {
	r := &Registry{seed: maphash.MakeSeed(), shared: map[string]*content{}}
	for _, s := range snaps {
		r.put(s, contentKey(s))
	}
	return r
}

// Put replaces the snapshot of s.ConnectionID. A catalog identical to one
// the registry holds for another connection is kept once, shared.
func (r *Registry) Put(s Snapshot) {
	key := contentKey(s)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.put(s, key)
	r.version.Add(1)
}

// put makes s, whose content has key, the snapshot of its connection in a
// new version, and lets go of the content of the one it replaces. The
// caller holds r.mu, or is NewRegistry.
func (r *Registry) put(s Snapshot, key string) {
	old, _ := r.entry(s.ConnectionID)
	r.root.Store(r.insert(r.root.Load(), newEntry(s, r.sharedContent(s, key))))
	if old != nil {
		r.release(old.c)
	}
}

// contentKey is s's ContentKey, or "" (not shared) if it has none.
func contentKey(s Snapshot) string {
	key, err := ContentKey(s)
	if err != nil {
		return ""
	}
	return key
}

// Version changes after every Put. What a caller derived from the
// registry while Version was v may be stale once Version is no longer v.
func (r *Registry) Version() uint64 { return r.version.Load() }

// insert returns a new version of the tree rooted at n holding e. Only
// nodes on the path to e's id are copied; the returned path is fresh, so
// rotations may modify it in place.
func (r *Registry) insert(n *node, e *entry) *node {
	id := e.snap.ConnectionID
	if n == nil {
		return &node{e: e, prio: maphash.String(r.seed, id)}
	}
	c := *n
	switch cmp := strings.Compare(id, n.e.snap.ConnectionID); {
	case cmp == 0:
		c.e = e
	case cmp < 0:
		c.left = r.insert(n.left, e)
		if c.left.prio > c.prio {
			l := c.left
			c.left, l.right = l.right, &c
			return l
		}
	default:
		c.right = r.insert(n.right, e)
		if c.right.prio > c.prio {
			rt := c.right
			c.right, rt.left = rt.left, &c
			return rt
		}
	}
	return &c
}

// entry finds the entry of a connection in the current version.
func (r *Registry) entry(connectionID string) (*entry, bool) {
	for n := r.root.Load(); n != nil; {
		switch cmp := strings.Compare(connectionID, n.e.snap.ConnectionID); {
		case cmp == 0:
			return n.e, true
		case cmp < 0:
			n = n.left
		default:
			n = n.right
		}
	}
	return nil, false
}

// Get returns the snapshot of a connection.
func (r *Registry) Get(connectionID string) (Snapshot, bool) {
	e, ok := r.entry(connectionID)
	if !ok {
		return Snapshot{}, false
	}
	return e.snap, true
}

// Tool returns the capability of one tool of a connection's snapshot.
// Capabilities are shared: callers must not modify them.
func (r *Registry) Tool(connectionID, tool string) (Capability, bool) {
	e, ok := r.entry(connectionID)
	if !ok {
		return Capability{}, false
	}
	i, ok := e.c.byTool[tool]
	if !ok {
		return Capability{}, false
	}
	return e.c.caps[i].of(connectionID), true
}

// Find returns the capability with a qualified name "<connection>.<tool>"
// among the connections usable accepts, trying the longest connection id
// first (connection ids contain dots). Its cost depends on the name, not
// on how many connections there are beyond an O(log n) search.
func (r *Registry) Find(name string, usable func(connectionID string) bool) (Capability, bool) {
	for i := strings.LastIndex(name, "."); i > 0; i = strings.LastIndex(name[:i], ".") {
		if c, ok := r.Tool(name[:i], name[i+1:]); ok && usable(name[:i]) {
			return c, true
		}
	}
	return Capability{}, false
}

// All returns every snapshot sorted by connection id. Snapshots are shared:
// callers must not modify them.
func (r *Registry) All() []Snapshot {
	var out []Snapshot
	r.walk(func(e *entry) { out = append(out, e.snap) })
	if out == nil {
		out = []Snapshot{}
	}
	return out
}

// Capabilities returns the capabilities of every connection usable
// accepts, by connection id and then in each snapshot's tool order.
// Capabilities are shared: callers must not modify them.
func (r *Registry) Capabilities(usable func(connectionID string) bool) []Capability {
	var out []Capability
	r.walk(func(e *entry) {
		if usable(e.snap.ConnectionID) {
			for _, c := range e.c.caps {
				out = append(out, c.of(e.snap.ConnectionID))
			}
		}
	})
	return out
}

// walk visits the entries of the current version in id order.
func (r *Registry) walk(visit func(*entry)) {
	var rec func(*node)
	rec = func(n *node) {
		if n == nil {
			return
		}
		rec(n.left)
		visit(n.e)
		rec(n.right)
	}
	rec(r.root.Load())
}
