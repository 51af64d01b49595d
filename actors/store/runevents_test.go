package store_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// kept encodes events as a durable store keeps them, and returns a
// reader of the entries that the store would hold.
func kept(t *testing.T, events []store.RunEvent, entries []workflow.TraceEntry) ([][]byte, func(start, limit int) ([]workflow.TraceEntry, error)) {
	is := is.New(t)
	texts := make([][]byte, len(events))
	for i, e := range events {
		text, err := store.EncodeRunEvent(e, store.Values{})
		is.NoErr(err)
		texts[i] = []byte(text)
	}
	return texts, func(start, limit int) ([]workflow.TraceEntry, error) {
		return entries[start:min(start+limit, len(entries))], nil
	}
}

// decodeWhole decodes an event kept whole.
func decodeWhole(text []byte) (store.RunEvent, error) {
	var e store.RunEvent
	err := json.Unmarshal(text, &e)
	return e, err
}

func TestAStepFinishedEventIsKeptAsAPointerToItsEntryAndReadsBackTheSame(t *testing.T) {
	is := is.New(t)
	entries := []workflow.TraceEntry{
		{FrameID: "root", NodeID: "a", StepType: "condition", Outcome: "false", NextNodeID: "b", ResolvedInput: workflow.Object{}},
		{FrameID: "root", NodeID: "b", StepType: "node", Outcome: "ok", NextNodeID: workflow.End,
			StateChanges: workflow.Object{"state.x": 1.0, "state.a": "y"}, Attempts: 2, Error: "once"},
	}
	r := store.Run{ID: "run-1", Status: store.RunCompleted, TraceCount: 2, UpdatedAt: time.UnixMilli(1_796_611_509_378),
		Outcome: new(string), Output: workflow.Object{"x": 1.0}}
	events := store.NewRunEvents(nil, r, entries, 0)
	texts, trace := kept(t, events, entries)
	is.Equal(string(texts[1]), "[2,1796611509378,0]") // the pointer: sequence, time, trace index
	is.True(len(texts[3]) > 50)                       // the status event, whole

	back, err := store.DecodeRunEvents("run-1", texts, decodeWhole, trace)
	is.NoErr(err)
	is.Equal(back, events) // each as it was
	back, err = store.DecodeRunEvents("run-1", texts[2:], decodeWhole, trace)
	is.NoErr(err)
	is.Equal(back, events[2:]) // from the middle too
}

func TestAStepFinishedEventWhoseEntryIsMissingIsAnError(t *testing.T) {
	is := is.New(t)
	entries := []workflow.TraceEntry{{FrameID: "root", NodeID: "a"}}
	events := store.NewRunEvents(nil, store.Run{ID: "run-1", Status: store.RunRunning, TraceCount: 1}, entries, 0)
	texts, _ := kept(t, events, entries)
	_, err := store.DecodeRunEvents("run-1", texts, decodeWhole, func(int, int) ([]workflow.TraceEntry, error) { return nil, nil })
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "trace entry 0")) // names the entry it misses
}

func TestASessionReplacementIsAnEventBeforeTheStepThatSawIt(t *testing.T) {
	is := is.New(t)
	entries := []workflow.TraceEntry{{FrameID: "root", NodeID: "second", StepType: "node", Outcome: "ok", NextNodeID: workflow.End, Generation: 2}}
	replaced := store.RunEventSession{Connection: "p.a", Scope: "run:run-1", OldGeneration: 1, NewGeneration: 2}
	prev := store.Run{ID: "run-1", Status: store.RunRunning, TraceCount: 3}
	next := store.Run{ID: "run-1", Status: store.RunRunning, TraceCount: 4, UpdatedAt: time.UnixMilli(1_796_611_509_378),
		Replaced: []store.RunEventSession{replaced}}
	events := store.NewRunEvents(&prev, next, entries, 7)
	is.Equal(len(events), 2)
	is.Equal(events[0].Kind, store.RunEventSessionReplaced)
	is.Equal(events[0].Seq, int64(8))
	is.Equal(*events[0].Session, replaced)
	is.Equal(events[1].Kind, store.RunEventStepFinished)

	texts, trace := kept(t, events, append(make([]workflow.TraceEntry, 3), entries...))
	back, err := store.DecodeRunEvents("run-1", texts, decodeWhole, trace)
	is.NoErr(err)
	is.Equal(back, events) // kept whole, read back the same

	data, err := json.Marshal(next.Kept())
	is.NoErr(err)
	is.True(!strings.Contains(string(data), "old_generation")) // not kept in the record a store writes
}
