package fakes

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// FullDisk is a store whose disk fills and empties on demand: while full,
// every run commit (CreateRun, RecordProgress, AppendRunEvents) and admin event append
// fails with an error wrapping store.ErrFull and writes nothing, as a
// SQLite store on a full disk does; reads and the other writes are the
// wrapped store's.
type FullDisk struct {
	store.Store
	full    atomic.Bool
	refused atomic.Int64
}

// NewFullDisk wraps st, with room on its disk.
func NewFullDisk(st store.Store) *FullDisk { return &FullDisk{Store: st} }

// Fill makes every write fail for lack of space, until Free.
func (d *FullDisk) Fill() { d.full.Store(true) }

// Free gives the disk room again.
func (d *FullDisk) Free() { d.full.Store(false) }

// Refused is how many writes failed for lack of space so far.
func (d *FullDisk) Refused() int64 { return d.refused.Load() }

// refuse is the error of a write while the disk is full, or nil.
func (d *FullDisk) refuse() error {
	if !d.full.Load() {
		return nil
	}
	d.refused.Add(1)
	return fmt.Errorf("fake disk: %w", store.ErrFull)
}

func (d *FullDisk) CreateRun(ctx context.Context, r store.Run, entries []workflow.TraceEntry) error {
	if err := d.refuse(); err != nil {
		return err
	}
	return d.Store.CreateRun(ctx, r, entries)
}

func (d *FullDisk) RecordProgress(ctx context.Context, r store.Run, entries []workflow.TraceEntry) error {
	if err := d.refuse(); err != nil {
		return err
	}
	return d.Store.RecordProgress(ctx, r, entries)
}

func (d *FullDisk) AppendRunEvents(ctx context.Context, runID string, events []store.RunEvent) error {
	if err := d.refuse(); err != nil {
		return err
	}
	return d.Store.AppendRunEvents(ctx, runID, events)
}

func (d *FullDisk) AppendEvent(ctx context.Context, e store.Event) (int64, error) {
	if err := d.refuse(); err != nil {
		return 0, err
	}
	return d.Store.AppendEvent(ctx, e)
}
