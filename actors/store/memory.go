package store

import (
	"cmp"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/mcpflow/mcpflow/actors/catalog"
)

// Memory is a Store that keeps its records in memory, for tests and
// benchmarks. It is safe for concurrent use. Records are deep-copied on the
// way in and out, so a caller never shares state with the store.
type Memory struct {
	mu          sync.Mutex
	workspaces  map[string]Workspace
	artifacts   map[artifactKey]storedArtifact
	deployments map[string]Deployment
	runs        map[string]*storedRun
	catalogs    map[string]catalog.Snapshot
	auth        map[string]AuthRecord
	registry    map[string]RegistryEntry
	webhooks    map[string]Webhook
	schedules   map[string]Schedule
	deliveries  map[deliveryKey]time.Time    // each claimed delivery's expiry
	hookLog     map[string][]WebhookDelivery // each webhook's recent deliveries, oldest first
	events      []Event                      // the kept events, in sequence order
	lastSeq     int64                        // the sequence number of the last event appended
	maxEvents   int
	retention   time.Duration        // see Options
	tombstones  map[string]time.Time // when each pruned run was pruned
	keys        map[string]IdempotencyKey
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty in-memory store.
func NewMemory(opts ...Option) *Memory {
	o := NewOptions(opts...)
	return &Memory{
		workspaces:  map[string]Workspace{},
		artifacts:   map[artifactKey]storedArtifact{},
		deployments: map[string]Deployment{},
		runs:        map[string]*storedRun{},
		catalogs:    map[string]catalog.Snapshot{},
		auth:        map[string]AuthRecord{},
		registry:    map[string]RegistryEntry{},
		webhooks:    map[string]Webhook{},
		schedules:   map[string]Schedule{},
		deliveries:  map[deliveryKey]time.Time{},
		hookLog:     map[string][]WebhookDelivery{},
		maxEvents:   o.MaxEvents,
		retention:   o.Retention,
		tombstones:  map[string]time.Time{},
		keys:        map[string]IdempotencyKey{},
	}
}

// Close does nothing: the records go when the Memory is garbage.
func (m *Memory) Close() error { return nil }

// deepCopy returns a copy of v that shares no memory with it. It is a JSON
// round trip, so the copy is also what a durable store would give back.
func deepCopy[T any](v T) (T, error) {
	var out T
	b, err := json.Marshal(v)
	if err != nil {
		return out, err
	}
	err = json.Unmarshal(b, &out)
	return out, err
}

// The keyed records (deployments, catalogs, auth, registry) share four
// operations. Each takes m.mu itself and copies records in and out.

// putKeyed stores a copy of v under key.
func putKeyed[V any](m *Memory, table map[string]V, key string, v V) error {
	c, err := deepCopy(v)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	table[key] = c
	return nil
}

// getKeyed returns a copy of the record under key, or ErrNotFound.
func getKeyed[V any](m *Memory, table map[string]V, key string) (V, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := table[key]
	if !ok {
		return v, ErrNotFound
	}
	return deepCopy(v)
}

// listKeyed returns copies of every record, ordered by key.
func listKeyed[V any](m *Memory, table map[string]V) ([]V, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return deepCopy(sortedValues(table))
}

// deleteKeyed removes the record under key and reports whether it existed.
func deleteKeyed[V any](m *Memory, table map[string]V, key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := table[key]
	delete(table, key)
	return ok
}

// sortedValues returns the values of m ordered by key.
func sortedValues[K cmp.Ordered, V any](m map[K]V) []V {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	values := make([]V, 0, len(keys))
	for _, k := range keys {
		values = append(values, m[k])
	}
	return values
}

// page returns the window [offset, offset+limit) of items, clamped to its
// bounds; limit <= 0 means no limit.
func page[T any](items []T, offset, limit int) []T {
	offset = min(max(offset, 0), len(items))
	end := len(items)
	if limit > 0 && limit < end-offset {
		end = offset + limit
	}
	return items[offset:end]
}
