package store

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// GetIdempotencyKey implements IdempotencyKeys.
func (m *Memory) GetIdempotencyKey(_ context.Context, key string) (IdempotencyKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.keys[key]
	if !ok {
		return IdempotencyKey{}, fmt.Errorf("idempotency key %q: %w", key, ErrNotFound)
	}
	return k, nil
}

// DropIdempotencyKeys implements RunRetention.
func (m *Memory) DropIdempotencyKeys(_ context.Context, now time.Time, limit int) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var expired []IdempotencyKey
	for k := range maps.Values(m.keys) {
		if !k.ExpiresAt.After(now) {
			expired = append(expired, k)
		}
	}
	slices.SortFunc(expired, func(a, b IdempotencyKey) int {
		return cmp.Or(a.ExpiresAt.Compare(b.ExpiresAt), strings.Compare(a.Key, b.Key))
	})
	expired = expired[:min(len(expired), limit)]
	for _, k := range expired {
		delete(m.keys, k.Key)
	}
	return len(expired), nil
}
