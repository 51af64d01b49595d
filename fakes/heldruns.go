package fakes

import (
	"context"
	"fmt"
	"sync"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// HeldRuns is a run store whose commits of progress (RecordProgress) are
// held until the test opens it: a test so acts on a run between two of
// its commits, at a point it chose. CreateRun is not held.
type HeldRuns struct {
	store.Runs
	held chan store.Run
	open chan struct{}
	once sync.Once
}

// NewHeldRuns holds the progress commits of runs until Open.
func NewHeldRuns(runs store.Runs) *HeldRuns {
	return &HeldRuns{Runs: runs, held: make(chan store.Run), open: make(chan struct{})}
}

// RecordProgress hands r to Held and waits for Open before it commits;
// once open, it commits at once. Its wait ends with ctx.
func (h *HeldRuns) RecordProgress(ctx context.Context, r store.Run, entries []workflow.TraceEntry) error {
	select {
	case h.held <- r:
		select {
		case <-h.open:
		case <-ctx.Done():
			return fmt.Errorf("held commit of run %s: %w", r.ID, ctx.Err())
		}
	case <-h.open:
	case <-ctx.Done():
		return fmt.Errorf("held commit of run %s: %w", r.ID, ctx.Err())
	}
	return h.Runs.RecordProgress(ctx, r, entries)
}

// Held waits, until ctx ends, for the next commit to be held and returns
// the record it commits.
func (h *HeldRuns) Held(ctx context.Context) (store.Run, error) {
	select {
	case r := <-h.held:
		return r, nil
	case <-ctx.Done():
		return store.Run{}, fmt.Errorf("no commit held: %w", ctx.Err())
	}
}

// Open lets every held commit through, and every later one.
func (h *HeldRuns) Open() { h.once.Do(func() { close(h.open) }) }
