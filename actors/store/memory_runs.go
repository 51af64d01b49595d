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

// storedRun is a run with its trace and its event log.
type storedRun struct {
	run    Run
	trace  []workflow.TraceEntry
	events []RunEvent
	// expires is when retention may prune it (RunExpiry); nil: kept.
	expires *time.Time
}

// CreateRun implements Runs.
func (m *Memory) CreateRun(_ context.Context, r Run, entries []workflow.TraceEntry) error {
	if r.TraceCount != len(entries) {
		return fmt.Errorf("create run %q: %d trace entries, yet trace_count is %d", r.ID, len(entries), r.TraceCount)
	}
	c, newEntries, err := copyProgress(r, entries)
	if err != nil {
		return fmt.Errorf("create run %q: %w", r.ID, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.runs[r.ID]; ok {
		return fmt.Errorf("create run %q: %w", r.ID, ErrExists)
	}
	claim := IdempotencyKeyOf(c)
	if claim != nil {
		if held, ok := m.keys[claim.Key]; ok && held.ExpiresAt.After(c.CreatedAt) {
			return fmt.Errorf("create run %q: %w", r.ID, KeyTaken(claim.Key))
		}
	}
	if err := m.appendRunAdminEvents(nil, c); err != nil {
		return fmt.Errorf("create run %q: %w", r.ID, err)
	}
	if claim != nil {
		m.keys[claim.Key] = *claim
	}
	m.runs[r.ID] = &storedRun{run: c, trace: newEntries, events: NewRunEvents(nil, c, newEntries, 0), expires: RunExpiry(c, m.retention)}
	return nil
}

// RecordProgress implements Runs.
func (m *Memory) RecordProgress(_ context.Context, r Run, entries []workflow.TraceEntry) error {
	c, newEntries, err := copyProgress(r, entries)
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
	if err := m.appendRunAdminEvents(&stored.run, c); err != nil {
		return fmt.Errorf("record progress of run %q: %w", r.ID, err)
	}
	stored.events = append(stored.events, NewRunEvents(&stored.run, c, newEntries, int64(len(stored.events)))...)
	stored.run = c
	stored.expires = RunExpiry(c, m.retention)
	stored.trace = append(stored.trace, newEntries...)
	return nil
}

// copyProgress copies a run and trace entries as the store keeps them.
func copyProgress(r Run, entries []workflow.TraceEntry) (Run, []workflow.TraceEntry, error) {
	c, err := deepCopy(inUTC(r))
	if err != nil {
		return Run{}, nil, err
	}
	newEntries, err := deepCopy(entries)
	if newEntries == nil {
		newEntries = []workflow.TraceEntry{}
	}
	return c, newEntries, err
}

// appendRunAdminEvents appends the admin events of a run's change from
// prev to next. m.mu is held.
func (m *Memory) appendRunAdminEvents(prev *Run, next Run) error {
	events, err := deepCopy(RunAdminEvents(prev, next))
	if err == nil {
		m.appendEvents(events...)
	}
	return err
}

// GetRun implements Runs.
func (m *Memory) GetRun(_ context.Context, id string) (Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	stored, ok := m.runs[id]
	if !ok {
		return Run{}, fmt.Errorf("get run %q: %w", id, m.missing(id))
	}
	return deepCopy(stored.run)
}

// ListRuns implements Runs.
func (m *Memory) ListRuns(_ context.Context, q RunQuery) ([]Run, int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	matched := []Run{}
	for _, stored := range m.runs {
		if (q.Status == "" || stored.run.Status == q.Status) && (q.DeploymentID == "" || stored.run.DeploymentID == q.DeploymentID) {
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
		return nil, fmt.Errorf("read trace of run %q: %w", runID, m.missing(runID))
	}
	return deepCopy(page(stored.trace, start, limit))
}

// ReadRunEvents implements RunEventLog.
func (m *Memory) ReadRunEvents(_ context.Context, runID string, afterSeq int64, limit int) ([]RunEvent, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	stored, ok := m.runs[runID]
	if !ok {
		return nil, 0, fmt.Errorf("read events of run %q: %w", runID, m.missing(runID))
	}
	// Sequence numbers are positions from 1: the events after afterSeq
	// start at index afterSeq.
	events, err := deepCopy(page(stored.events, int(min(max(afterSeq, 0), int64(len(stored.events)))), limit))
	if err != nil {
		return nil, 0, fmt.Errorf("read events of run %q: %w", runID, err)
	}
	return events, int64(len(stored.events)), nil
}

// RecoverRunning implements Runs.
func (m *Memory) RecoverRunning(_ context.Context, now time.Time) ([]Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	recovered := []Run{}
	for _, stored := range sortedValues(m.runs) {
		if stored.run.Status == RunRunning {
			failed := RecoveredRun(stored.run, now)
			if err := m.appendRunAdminEvents(&stored.run, failed); err != nil {
				return nil, fmt.Errorf("recover run %q: %w", failed.ID, err)
			}
			stored.events = append(stored.events, NewRunEvents(&stored.run, failed, nil, int64(len(stored.events)))...)
			stored.run = failed
			stored.expires = RunExpiry(failed, m.retention)
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

// AppendRunEvents implements RunLiveEvents.
func (m *Memory) AppendRunEvents(_ context.Context, runID string, events []RunEvent) error {
	c, err := deepCopy(events)
	if err != nil {
		return fmt.Errorf("append events to run %q: %w", runID, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	stored, ok := m.runs[runID]
	if !ok {
		return fmt.Errorf("append events to run %q: %w", runID, m.missing(runID))
	}
	if Terminal(stored.run.Status) {
		return fmt.Errorf("append events to run %q: it is %s: %w", runID, stored.run.Status, ErrConflict)
	}
	stored.events = append(stored.events, NumberRunEvents(runID, c, int64(len(stored.events)))...)
	return nil
}

// SubmitCommit implements Submitter: a memory store writes in place, so
// done is called before it returns.
func (m *Memory) SubmitCommit(ctx context.Context, c Commit, done func(CommitOutcome)) {
	done(CommitInPlace(ctx, m, c))
}
