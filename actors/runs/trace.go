package runs

import (
	"context"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// DefaultTraceLimit is how many trace entries a read answers when it
// names no limit.
const DefaultTraceLimit = 20

// TraceWindow is a slice of a run's trace.
type TraceWindow struct {
	Entries      []workflow.TraceEntry
	Start, Limit int
	// Truncated says the run has entries past the window.
	Truncated bool
}

// ReadTrace reads a window of run r's trace from st: from start (0 when
// nil), at most limit entries (DefaultTraceLimit when nil). A failed read
// is a *StoreError.
func ReadTrace(ctx context.Context, st store.Store, r store.Run, start, limit *int) (TraceWindow, error) {
	w := TraceWindow{Limit: DefaultTraceLimit}
	if start != nil {
		w.Start = *start
	}
	if limit != nil {
		w.Limit = *limit
	}
	entries, err := st.ReadTrace(ctx, r.ID, w.Start, w.Limit)
	if err != nil {
		return TraceWindow{}, storeErr(err, fmt.Sprintf("trace of run %q", r.ID))
	}
	w.Entries, w.Truncated = entries, r.TraceCount > w.Start+w.Limit
	return w, nil
}
