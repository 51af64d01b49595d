package fakes

import (
	"context"
	"fmt"
	"sync"

	"github.com/mcpflow/mcpflow/actors/store"
)

// HeldEvents is an admin event log whose appends are held until the test
// lets each through, or opens it: a test so sees what happens while an
// append waits for the store, and in which order appends reach it. Reads
// are the wrapped log's.
type HeldEvents struct {
	store.Events
	held chan heldAppend
	open chan struct{}
	once sync.Once
}

// heldAppend is an append waiting for through (or Open).
type heldAppend struct {
	event   store.Event
	through chan struct{}
}

// NewHeldEvents holds the appends to events.
func NewHeldEvents(events store.Events) *HeldEvents {
	return &HeldEvents{Events: events, held: make(chan heldAppend), open: make(chan struct{})}
}

// AppendEvent hands e to Held and waits to be let through before it
// appends; once open, it appends at once. Its wait ends with ctx.
func (h *HeldEvents) AppendEvent(ctx context.Context, e store.Event) (int64, error) {
	a := heldAppend{event: e, through: make(chan struct{})}
	select {
	case h.held <- a:
		select {
		case <-a.through:
		case <-h.open:
		case <-ctx.Done():
			return 0, fmt.Errorf("held append of %s: %w", e.Kind, ctx.Err())
		}
	case <-h.open:
	case <-ctx.Done():
		return 0, fmt.Errorf("held append of %s: %w", e.Kind, ctx.Err())
	}
	return h.Events.AppendEvent(ctx, e)
}

// Held waits, until ctx ends, for the next append to reach the store, and
// returns its event and what lets it through (once).
func (h *HeldEvents) Held(ctx context.Context) (store.Event, func(), error) {
	select {
	case a := <-h.held:
		return a.event, func() { close(a.through) }, nil
	case <-ctx.Done():
		return store.Event{}, nil, fmt.Errorf("no append held: %w", ctx.Err())
	}
}

// Open lets every held append through, and every later one.
func (h *HeldEvents) Open() { h.once.Do(func() { close(h.open) }) }
