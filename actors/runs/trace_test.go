package runs_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// A trace read answers a window of the run's trace, from 0 and of
// DefaultTraceLimit entries unless told, truncated when the run has
// entries past it; an unknown run is a store failure wrapping
// store.ErrNotFound.
func TestReadTraceAnswersAWindowOfTheRunsTrace(t *testing.T) {
	st := store.NewMemory()
	entries := make([]workflow.TraceEntry, 25)
	for i := range entries {
		entries[i] = workflow.TraceEntry{NodeID: fmt.Sprint(i)}
	}
	run := store.Run{ID: "r", Status: store.RunCompleted, TraceCount: len(entries)}
	is.New(t).NoErr(st.CreateRun(bounded(t), run, entries))
	ptr := func(n int) *int { return &n }
	for _, tc := range []struct {
		name                 string
		start, limit         *int
		wantStart, wantLimit int
		wantLen              int
		truncated            bool
	}{
		{"defaults", nil, nil, 0, runs.DefaultTraceLimit, 20, true},
		{"to the end", ptr(5), nil, 5, runs.DefaultTraceLimit, 20, false},
		{"a short window", ptr(2), ptr(3), 2, 3, 3, true},
		{"the tail", ptr(20), ptr(10), 20, 10, 5, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			w, err := runs.ReadTrace(bounded(t), st, run, tc.start, tc.limit)
			is.NoErr(err)
			is.Equal(w.Start, tc.wantStart)
			is.Equal(w.Limit, tc.wantLimit)
			is.Equal(len(w.Entries), tc.wantLen)
			is.Equal(w.Entries[0].NodeID, fmt.Sprint(tc.wantStart)) // the window starts at start
			is.Equal(w.Truncated, tc.truncated)
		})
	}
	_, err := runs.ReadTrace(bounded(t), st, store.Run{ID: "none"}, nil, nil)
	var stored *runs.StoreError
	is.New(t).True(errors.As(err, &stored) && errors.Is(err, store.ErrNotFound))
}
