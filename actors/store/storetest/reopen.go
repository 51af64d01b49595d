package storetest

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// Reopen checks what a durable store keeps across a close and a reopen:
// auth records, registry entries, the events (their numbers go on, and
// only the newest 2 are kept), a run's checkpoint and its events. open
// opens the same store each time, keeping at most 2 events; Reopen closes
// what it opens.
func Reopen(t *testing.T, open func(t *testing.T) store.Store) {
	is := is.New(t)
	ctx := t.Context()

	s := open(t)
	auth := store.AuthRecord{ID: "github", Scheme: "env", Payload: map[string]any{"env": map[string]any{"TOKEN": "x"}}}
	is.NoErr(s.SaveAuth(ctx, auth))
	entry := store.RegistryEntry{ID: "github", Kind: "mcp", Enabled: true, Transport: map[string]any{"kind": "stdio"}}
	is.NoErr(s.PutRegistryEntry(ctx, entry))
	for range 3 {
		_, err := s.AppendEvent(ctx, store.Event{Kind: "auth_saved"})
		is.NoErr(err)
	}
	r := store.Run{ID: "run", Status: store.RunRunning}
	is.NoErr(s.CreateRun(ctx, r, nil))
	r.CurrentStep, r.State, r.TraceCount = "parse", map[string]any{"page": "<html>"}, 1
	is.NoErr(s.RecordProgress(ctx, r, []workflow.TraceEntry{{NodeID: "fetch"}}))
	is.NoErr(s.Close())

	s = open(t)
	defer func() { is.NoErr(s.Close()) }()
	gotAuth, err := s.GetAuth(ctx, "github")
	is.NoErr(err)
	is.Equal(gotAuth, auth)
	gotEntry, err := s.GetRegistryEntry(ctx, "github")
	is.NoErr(err)
	is.Equal(gotEntry, entry)
	seq, err := s.AppendEvent(ctx, store.Event{Kind: "auth_saved"})
	is.NoErr(err)
	is.Equal(seq, int64(5)) // numbering goes on, after the run's workflow_run_started
	events, err := s.ListEvents(ctx, 0, 0)
	is.NoErr(err)
	is.Equal(len(events), 2)
	is.Equal(events[0].Seq, int64(4))
	gotRun, err := s.GetRun(ctx, "run")
	is.NoErr(err)
	is.Equal(gotRun.CurrentStep, "parse")
	is.Equal(gotRun.State, r.State) // the checkpoint
	runEvents, last, err := s.ReadRunEvents(ctx, "run", 0, 0)
	is.NoErr(err)
	is.Equal(last, int64(2)) // the run's events replay after a restart
	is.Equal([]string{runEvents[0].Kind, runEvents[1].Kind}, []string{store.RunEventStatusChanged, store.RunEventStepFinished})
}
