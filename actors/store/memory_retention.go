package store

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"
)

// PruneRuns implements RunRetention.
func (m *Memory) PruneRuns(_ context.Context, now time.Time, limit PruneLimit) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var expired []*storedRun
	for _, stored := range m.runs {
		if stored.expires != nil && !stored.expires.After(now) {
			expired = append(expired, stored)
		}
	}
	slices.SortFunc(expired, func(a, b *storedRun) int {
		return cmp.Or(a.expires.Compare(*b.expires), strings.Compare(a.run.ID, b.run.ID))
	})
	batch, pruned := NewPruneBatch(limit), 0
	for _, stored := range expired {
		if !batch.Take(stored.run.TraceCount) {
			break
		}
		delete(m.runs, stored.run.ID)
		m.tombstones[stored.run.ID] = now.UTC()
		pruned++
	}
	return pruned, nil
}

// DropTombstones implements RunRetention.
func (m *Memory) DropTombstones(_ context.Context, before time.Time, limit int) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	type tombstone struct {
		id string
		at time.Time
	}
	var old []tombstone
	for id, at := range m.tombstones {
		if at.Before(before) {
			old = append(old, tombstone{id, at})
		}
	}
	slices.SortFunc(old, func(a, b tombstone) int { return cmp.Or(a.at.Compare(b.at), strings.Compare(a.id, b.id)) })
	old = old[:min(len(old), limit)]
	for _, t := range old {
		delete(m.tombstones, t.id)
	}
	return len(old), nil
}

// ReclaimSpace implements RunRetention: the garbage collector reclaims a
// Memory's space.
func (m *Memory) ReclaimSpace(context.Context) (bool, error) { return false, nil }

// StoreSize implements RunRetention: a Memory has no files.
func (m *Memory) StoreSize(context.Context) (int64, error) { return 0, nil }

// missing is the error of a run that is not stored: ErrPruned if it was
// pruned, else ErrNotFound. m.mu is held.
func (m *Memory) missing(id string) error {
	if _, ok := m.tombstones[id]; ok {
		return ErrPruned
	}
	return ErrNotFound
}
