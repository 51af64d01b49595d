package store

import (
	"maps"
	"slices"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// RunHead is what a commit compares of the run it changes (NewRunEvents,
// RunAdminEvents): its status, its trace count, the id of the interrupt
// it waits in and the ids of the calls its checkpoint lists as in
// flight. A store keeps it in columns of the run's row, next to the
// record, so that a commit reads it without decoding the record.
type RunHead struct {
	ID          string
	Status      string
	TraceCount  int
	InterruptID *string  // nil for none
	Calls       []string // sorted; never nil in HeadOf's
}

// HeadOf returns r's head.
func HeadOf(r Run) RunHead {
	h := RunHead{ID: r.ID, Status: r.Status, TraceCount: r.TraceCount, Calls: []string{}}
	if r.Interrupt != nil {
		h.InterruptID = &r.Interrupt.ID
	}
	if r.Checkpoint != nil && len(r.Checkpoint.Calls) > 0 {
		h.Calls = slices.Sorted(maps.Keys(r.Checkpoint.Calls))
	}
	return h
}

// Run is the run as NewRunEvents and RunAdminEvents read the run before a
// commit: its head, and nothing else.
func (h RunHead) Run() Run {
	prev := Run{ID: h.ID, Status: h.Status, TraceCount: h.TraceCount}
	if h.InterruptID != nil {
		prev.Interrupt = &workflow.Interrupt{ID: *h.InterruptID}
	}
	if len(h.Calls) > 0 { // else no call of the next commit's is one it had
		prev.Checkpoint = &workflow.Snapshot{Calls: make(map[string]workflow.Call, len(h.Calls))}
		for _, c := range h.Calls {
			prev.Checkpoint.Calls[c] = workflow.Call{ID: c}
		}
	}
	return prev
}
