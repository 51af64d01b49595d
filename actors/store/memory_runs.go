package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// storedRun is a run with its trace.
type storedRun struct {
	run   Run
	trace []workflow.TraceEntry
}

// CreateRun implements Runs.
func (m *Memory) CreateRun(_ context.Context, r Run) error {
	if r.TraceCount != 0 {
		return fmt.Errorf("create run %q: a new run has no trace, yet trace_count is %d", r.ID, r.TraceCount)
	}
	c, err := deepCopy(inUTC(r))
	if err != nil {
		return fmt.Errorf("create run %q: %w", r.ID, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.runs[r.ID]; ok {
		return fmt.Errorf("create run %q: %w", r.ID, ErrExists)
	}
	m.runs[r.ID] = &storedRun{run: c, trace: []workflow.TraceEntry{}}
	return nil
}

// RecordProgress implements Runs.
func (m *Memory) RecordProgress(_ context.Context, r Run, entries []workflow.TraceEntry) error {
	c, err := deepCopy(inUTC(r))
	if err != nil {
		return fmt.Errorf("record progress of run %q: %w", r.ID, err)
	}
	newEntries, err := deepCopy(entries)
	if err != nil {
		return fmt.Errorf("record progress of run %q: %w", r.ID, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	stored, ok := m.runs[r.ID]
	if !ok {
		return fmt.Errorf("record progress of run %q: %w", r.ID, ErrNotFound)
	}
	if len(stored.trace) != r.TraceCount-len(entries) {
		return fmt.Errorf("record progress of run %q: %d entries stored, %d appended, but trace_count is %d: %w",
			r.ID, len(stored.trace), len(entries), r.TraceCount, ErrConflict)
	}
	stored.run = c
	stored.trace = append(stored.trace, newEntries...)
	return nil
}

// GetRun implements Runs.
func (m *Memory) GetRun(_ context.Context, id string) (Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	stored, ok := m.runs[id]
	if !ok {
		return Run{}, fmt.Errorf("get run %q: %w", id, ErrNotFound)
	}
	return deepCopy(stored.run)
}

// ListRuns implements Runs.
func (m *Memory) ListRuns(_ context.Context, q RunQuery) ([]Run, int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	matched := []Run{}
	for _, stored := range m.runs {
		if q.Status == "" || stored.run.Status == q.Status {
			matched = append(matched, stored.run)
		}
	}
	slices.SortFunc(matched, func(a, b Run) int {
		return cmp.Or(b.UpdatedAt.Compare(a.UpdatedAt), strings.Compare(b.ID, a.ID))
	})
	list, err := deepCopy(page(matched, q.Offset, q.Limit))
	if err != nil {
		return nil, 0, err
	}
	return list, len(matched), nil
}

// ReadTrace implements Runs.
func (m *Memory) ReadTrace(_ context.Context, runID string, start, limit int) ([]workflow.TraceEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	stored, ok := m.runs[runID]
	if !ok {
		return nil, fmt.Errorf("read trace of run %q: %w", runID, ErrNotFound)
	}
	return deepCopy(page(stored.trace, start, limit))
}

// RecoverRunning implements Runs.
func (m *Memory) RecoverRunning(_ context.Context, now time.Time) ([]Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	recovered := []Run{}
	for _, stored := range sortedValues(m.runs) {
		if stored.run.Status == RunRunning {
			stored.run = RecoveredRun(stored.run, now)
			recovered = append(recovered, stored.run)
		}
	}
	return deepCopy(recovered)
}

// inUTC returns r with its timestamps in UTC, as every store returns them.
func inUTC(r Run) Run {
	r.CreatedAt = r.CreatedAt.UTC()
	r.UpdatedAt = r.UpdatedAt.UTC()
	return r
}
