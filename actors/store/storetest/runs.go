package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// progress records entries as the next steps of r and returns the run as
// stored.
func progress(ctx context.Context, is *is.I, s store.Store, r store.Run, entries ...workflow.TraceEntry) store.Run {
	r.TraceCount += len(entries)
	is.NoErr(s.RecordProgress(ctx, r, entries))
	return r
}

func testRuns(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	r := run("run-1", store.RunRunning, t0)
	r.CreatedAt = t0.In(time.FixedZone("UTC+2", 2*60*60))
	is.NoErr(s.CreateRun(ctx, r, nil))

	got, err := s.GetRun(ctx, "run-1")
	is.NoErr(err)
	is.Equal(got.CreatedAt.Location(), time.UTC) // timestamps come back in UTC
	is.True(got.CreatedAt.Equal(t0))             // to the millisecond
	is.Equal(got, run("run-1", store.RunRunning, t0))

	err = s.CreateRun(ctx, run("run-1", store.RunCompleted, t0), nil)
	is.True(errors.Is(err, store.ErrExists))
	withTrace := run("run-2", store.RunRunning, t0)
	withTrace.TraceCount = 1
	is.True(s.CreateRun(ctx, withTrace, nil) != nil) // a trace count that is not the entries' count is refused
	_, err = s.GetRun(ctx, "run-2")
	is.True(errors.Is(err, store.ErrNotFound)) // and nothing is stored
	_, err = s.GetRun(ctx, "run-missing")
	is.True(errors.Is(err, store.ErrNotFound))
}

func testRecordProgress(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	r := run("run-1", store.RunRunning, t0)
	is.NoErr(s.CreateRun(ctx, r, nil))

	r.CurrentStep = "parse"
	r.UpdatedAt = t0.Add(time.Second)
	r = progress(ctx, is, s, r, entry("fetch", "parse"))
	got, err := s.GetRun(ctx, "run-1")
	is.NoErr(err)
	is.Equal(got, r) // the record is replaced

	// 1: the same step sent twice; 3: a step lost on the way.
	for _, traceCount := range []int{1, 3} {
		stale := r
		stale.Status = store.RunCompleted
		stale.TraceCount = traceCount
		err = s.RecordProgress(ctx, stale, []workflow.TraceEntry{entry("parse", workflow.End)})
		is.True(errors.Is(err, store.ErrConflict)) // trace count mismatch
	}
	got, err = s.GetRun(ctx, "run-1")
	is.NoErr(err)
	is.Equal(got, r) // a rejected update changes nothing
	trace, err := s.ReadTrace(ctx, "run-1", 0, 0)
	is.NoErr(err)
	is.Equal(trace, []workflow.TraceEntry{entry("fetch", "parse")})

	r.Status = store.RunCompleted
	r = progress(ctx, is, s, r) // no entries: the record alone
	got, err = s.GetRun(ctx, "run-1")
	is.NoErr(err)
	is.Equal(got, r)

	err = s.RecordProgress(ctx, run("run-missing", store.RunRunning, t0), nil)
	is.True(errors.Is(err, store.ErrNotFound))
}

func testReadTrace(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	r := run("run-1", store.RunRunning, t0)
	is.NoErr(s.CreateRun(ctx, r, nil))
	trace, err := s.ReadTrace(ctx, "run-1", 0, 10)
	is.NoErr(err)
	is.Equal(len(trace), 0) // a new run has an empty trace

	e0, e1, e2 := entry("a", "b"), entry("b", "c"), entry("c", workflow.End)
	r = progress(ctx, is, s, r, e0)
	progress(ctx, is, s, r, e1, e2)

	for _, tt := range []struct {
		name         string
		start, limit int
		want         []workflow.TraceEntry
	}{
		{"all", 0, 0, []workflow.TraceEntry{e0, e1, e2}},
		{"first", 0, 1, []workflow.TraceEntry{e0}},
		{"middle", 1, 1, []workflow.TraceEntry{e1}},
		{"to the end", 1, 10, []workflow.TraceEntry{e1, e2}},
		{"past the end", 3, 10, []workflow.TraceEntry{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			trace, err := s.ReadTrace(ctx, "run-1", tt.start, tt.limit)
			is.NoErr(err)
			is.Equal(len(trace), len(tt.want))
			for i := range trace {
				is.Equal(trace[i], tt.want[i])
			}
		})
	}

	_, err = s.ReadTrace(ctx, "run-missing", 0, 10)
	is.True(errors.Is(err, store.ErrNotFound))
}

func testListRuns(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	for _, r := range []store.Run{
		run("a", store.RunRunning, t0.Add(1*time.Second)),
		run("b", store.RunCompleted, t0.Add(3*time.Second)),
		run("c", store.RunCompleted, t0.Add(3*time.Second)), // ties with b: id breaks it
		run("d", store.RunFailed, t0.Add(2*time.Second)),
	} {
		is.NoErr(s.CreateRun(ctx, r, nil))
	}
	check := func(q store.RunQuery, want []string, total int) {
		t.Helper()
		list, n, err := s.ListRuns(ctx, q)
		is.NoErr(err)
		ids := []string{}
		for _, r := range list {
			ids = append(ids, r.ID)
		}
		is.Equal(ids, want)
		is.Equal(n, total)
	}
	check(store.RunQuery{}, []string{"c", "b", "d", "a"}, 4)
	check(store.RunQuery{Status: store.RunCompleted}, []string{"c", "b"}, 2)
	check(store.RunQuery{Status: store.RunInterrupted}, []string{}, 0)
	check(store.RunQuery{Offset: 1, Limit: 2}, []string{"b", "d"}, 4)
	check(store.RunQuery{Offset: 9, Limit: 2}, []string{}, 4)

	moved := run("a", store.RunRunning, t0.Add(time.Minute))
	progress(ctx, is, s, moved, entry("fetch", workflow.End))
	check(store.RunQuery{Limit: 1}, []string{"a"}, 4) // progress moves a run up
}

func testRecoverRunning(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	inStep := run("run-in-step", store.RunRunning, t0)
	inStep.CurrentStep = "fetch"
	notStarted := run("run-not-started", store.RunRunning, t0)
	done := run("run-done", store.RunCompleted, t0)
	for _, r := range []store.Run{inStep, notStarted, done} {
		is.NoErr(s.CreateRun(ctx, r, nil))
	}
	inStep = progress(ctx, is, s, inStep, entry("start", "fetch"))

	now := t0.Add(time.Hour).In(time.FixedZone("UTC-5", -5*60*60))
	recovered, err := s.RecoverRunning(ctx, now)
	is.NoErr(err)
	is.Equal(len(recovered), 2) // only running runs change
	for _, r := range recovered {
		is.Equal(r.Status, store.RunFailed)
		is.Equal(r.ResumeReadiness, "not_applicable")
		is.Equal(r.UpdatedAt.Location(), time.UTC)
		is.True(r.UpdatedAt.Equal(now))
		is.True(r.Error != nil) // the failure says why
		stored, err := s.GetRun(ctx, r.ID)
		is.NoErr(err)
		is.Equal(stored, r) // what is returned is what is stored
	}
	byID := map[string]store.Run{recovered[0].ID: recovered[0], recovered[1].ID: recovered[1]}
	is.True(strings.Contains(*byID["run-in-step"].Error, `step "fetch"`)) // names the step in flight
	is.Equal(byID["run-in-step"].TraceCount, inStep.TraceCount)

	trace, err := s.ReadTrace(ctx, "run-in-step", 0, 0)
	is.NoErr(err)
	is.Equal(trace, []workflow.TraceEntry{entry("start", "fetch")}) // the trace stays
	got, err := s.GetRun(ctx, "run-done")
	is.NoErr(err)
	is.Equal(got, done) // finished runs are left alone

	recovered, err = s.RecoverRunning(ctx, now)
	is.NoErr(err)
	is.Equal(len(recovered), 0) // nothing is running any more
}

// testCheckpoint records a run's checkpoint (CurrentStep and State) step by
// step: every read gives the last one, and recovery keeps it.
func testCheckpoint(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	r := run("run", store.RunRunning, t0)
	is.NoErr(s.CreateRun(ctx, r, nil))
	got, err := s.GetRun(ctx, "run")
	is.NoErr(err)
	is.Equal(got.State, nil) // no step has committed yet

	r.CurrentStep = "parse"
	r.State = map[string]any{"page": map[string]any{"status": 200.0, "body": "<html>"}}
	r = progress(ctx, is, s, r, entry("fetch", "parse"))
	got, err = s.GetRun(ctx, "run")
	is.NoErr(err)
	is.Equal(got, r)

	r.CurrentStep = "save"
	r.State = map[string]any{
		"page":   map[string]any{"status": 200.0, "body": "<html>"},
		"parsed": map[string]any{"links": []any{"a", "b"}, "count": 2.0, "empty": nil},
	}
	r = progress(ctx, is, s, r, entry("parse", "save"))
	got, err = s.GetRun(ctx, "run")
	is.NoErr(err)
	is.Equal(got.CurrentStep, "save")
	is.Equal(got.State, r.State) // the last checkpoint replaces the one before
	list, _, err := s.ListRuns(ctx, store.RunQuery{})
	is.NoErr(err)
	is.Equal(list, []store.Run{r}) // lists carry the checkpoint too

	recovered, err := s.RecoverRunning(ctx, t0.Add(time.Hour))
	is.NoErr(err)
	is.Equal(len(recovered), 1)
	is.Equal(recovered[0].CurrentStep, "save")
	is.Equal(recovered[0].State, r.State) // recovery keeps the checkpoint
	got, err = s.GetRun(ctx, "run")
	is.NoErr(err)
	is.Equal(got.State, r.State)

	cleared := run("run-cleared", store.RunRunning, t0)
	is.NoErr(s.CreateRun(ctx, cleared, nil))
	cleared.State = map[string]any{}
	progress(ctx, is, s, cleared)
	got, err = s.GetRun(ctx, "run-cleared")
	is.NoErr(err)
	is.Equal(got.State, nil) // an empty state reads back as nil
}
