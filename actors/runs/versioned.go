package runs

import "sync"

// maxKept bounds the entries of each versioned map.
const maxKept = 1024

// versioned is a bounded map of values derived from state that changes,
// each kept with the version of that state it was derived at: get answers
// only while that version is current, so a caller reads the version
// before what it derives, and whoever changes the state bumps the version
// after. Full, it forgets an arbitrary entry. It is safe for concurrent
// use; values are shared, read only.
type versioned[K, At comparable, V any] struct {
	mu      sync.Mutex
	entries map[K]versionedEntry[At, V]
}

type versionedEntry[At comparable, V any] struct {
	at    At
	value V
}

// get returns the value of k derived at version at, if it is kept.
func (m *versioned[K, At, V]) get(k K, at At) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[k]
	if !ok || e.at != at {
		var zero V
		return zero, false
	}
	return e.value, true
}

// put keeps v as the value of k derived at version at.
func (m *versioned[K, At, V]) put(k K, at At, v V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil {
		m.entries = map[K]versionedEntry[At, V]{}
	}
	if _, ok := m.entries[k]; !ok && len(m.entries) >= maxKept {
		for old := range m.entries {
			delete(m.entries, old)
			break
		}
	}
	m.entries[k] = versionedEntry[At, V]{at: at, value: v}
}
