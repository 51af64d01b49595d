package store_test

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// TestARunsHeadComparesAsTheRunDoes: the events and admin events of a
// commit are the same whether the run before it is the whole record or
// only its head (what SQLite and PostgreSQL read of it).
func TestARunsHeadComparesAsTheRunDoes(t *testing.T) {
	is := is.New(t)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	call := func(id string) workflow.Call { return workflow.Call{ID: id, FrameID: "root", NodeID: "n" + id} }
	for _, c := range []struct {
		name       string
		prev, next store.Run
	}{
		{"a call stays in flight, another starts",
			store.Run{Status: store.RunRunning, Checkpoint: &workflow.Snapshot{Calls: map[string]workflow.Call{"c1": call("c1")}}},
			store.Run{Status: store.RunRunning, Checkpoint: &workflow.Snapshot{Calls: map[string]workflow.Call{"c1": call("c1"), "c2": call("c2")}}}},
		{"no call, then one",
			store.Run{Status: store.RunRunning},
			store.Run{Status: store.RunRunning, Checkpoint: &workflow.Snapshot{Calls: map[string]workflow.Call{"c1": call("c1")}}}},
		{"still in the same interrupt",
			store.Run{Status: store.RunInterrupted, Interrupt: &workflow.Interrupt{ID: "i1", Kind: "approval"}},
			store.Run{Status: store.RunInterrupted, Interrupt: &workflow.Interrupt{ID: "i1", Kind: "approval"}}},
		{"from one interrupt to another",
			store.Run{Status: store.RunInterrupted, Interrupt: &workflow.Interrupt{ID: "i1"}},
			store.Run{Status: store.RunInterrupted, Interrupt: &workflow.Interrupt{ID: "i2"}}},
		{"resumed and completed",
			store.Run{Status: store.RunInterrupted, Interrupt: &workflow.Interrupt{ID: "i1"}},
			store.Run{Status: store.RunCompleted, Outcome: new("ok")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			c.prev.ID, c.next.ID, c.prev.UpdatedAt, c.next.UpdatedAt = "r", "r", at, at.Add(time.Second)
			head := store.HeadOf(c.prev).Run()
			is.Equal(store.NewRunEvents(&head, c.next, nil, 3), store.NewRunEvents(&c.prev, c.next, nil, 3)) // the same run events
			is.Equal(store.RunAdminEvents(&head, c.next), store.RunAdminEvents(&c.prev, c.next))             // the same admin events
		})
	}
	is.Equal(store.HeadOf(store.Run{ID: "r"}).Calls, []string{}) // no call in flight: an empty list, never nil
}
