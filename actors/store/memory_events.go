package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
)

// AppendEvent implements Events: past maxEvents, the oldest events go.
func (m *Memory) AppendEvent(_ context.Context, e Event) (int64, error) {
	e.Seq = 0
	c, err := deepCopy(e)
	if err != nil {
		return 0, fmt.Errorf("append event %q: %w", e.Kind, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.appendEvents(c), nil
}

// appendEvents appends copies of events, numbered, and drops the oldest
// past maxEvents; it returns the last sequence number. m.mu is held.
func (m *Memory) appendEvents(events ...Event) int64 {
	for _, e := range events {
		m.lastSeq++
		e.Seq = m.lastSeq
		m.events = append(m.events, e)
	}
	if drop := len(m.events) - m.maxEvents; drop > 0 {
		clear(m.events[:drop]) // let go of their payloads
		m.events = m.events[drop:]
	}
	return m.lastSeq
}

// ListEvents implements Events.
func (m *Memory) ListEvents(_ context.Context, afterSeq int64, limit int) ([]Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	first, found := slices.BinarySearchFunc(m.events, afterSeq, func(e Event, seq int64) int {
		return cmp.Compare(e.Seq, seq)
	})
	if found {
		first++
	}
	list, err := deepCopy(page(m.events[first:], 0, limit))
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	if list == nil {
		list = []Event{}
	}
	return list, nil
}

// LastEventSeq implements Events.
func (m *Memory) LastEventSeq(context.Context) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lastSeq, nil
}
