package store

import (
	"encoding/json"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// A step_finished event says no more than the trace entry it points to
// (NewRunEvents derives it from the entry and its index), and a run has
// one per step: a durable store keeps it as that pointer, the JSON array
// [sequence, timestamp, trace index], where the event was the larger part
// of what a pure step wrote, and builds it again from the entry when it
// is read (DecodeRunEvents). Every other event is kept whole, packed
// (Values.Pack).

// EncodeRunEvent returns the text a durable store keeps for e, an event
// of one of its commits; values takes the large values of an event kept
// whole.
func EncodeRunEvent(e RunEvent, values Values) (string, error) {
	if e.Kind == RunEventStepFinished && e.Step != nil && e.Step.TraceIndex != nil {
		return fmt.Sprintf("[%d,%d,%d]", e.Seq, e.TimestampEpochMs, *e.Step.TraceIndex), nil
	}
	return values.Pack(e.RunID, e)
}

// stepPointer reports whether a stored event's text is the pointer that
// EncodeRunEvent keeps of a step_finished event.
func stepPointer(text []byte) bool {
	return len(text) > 1 && text[0] == '[' && (text[1] == '-' || text[1] >= '0' && text[1] <= '9')
}

// DecodeRunEvents returns the events of run id that texts, in sequence
// order, hold as a durable store keeps them (EncodeRunEvent): decode
// reads one kept whole (unpacking it), and trace reads the run's entries
// [start, start+limit), which it is asked for once, for those that the
// step_finished events among texts point to.
func DecodeRunEvents(id string, texts [][]byte, decode func([]byte) (RunEvent, error), trace func(start, limit int) ([]workflow.TraceEntry, error)) ([]RunEvent, error) {
	events := make([]RunEvent, len(texts))
	type pointer struct {
		event int
		index int
	}
	var pointers []pointer
	first, last := 0, -1
	for i, text := range texts {
		if !stepPointer(text) {
			var err error
			if events[i], err = decode(text); err != nil {
				return nil, err
			}
			continue
		}
		var p [3]int64
		if err := json.Unmarshal(text, &p); err != nil {
			return nil, fmt.Errorf("read a step_finished event of run %q: %w", id, err)
		}
		events[i] = RunEvent{RunID: id, Seq: p[0], Kind: RunEventStepFinished, TimestampEpochMs: p[1]}
		index := int(p[2])
		if len(pointers) == 0 || index < first {
			first = index
		}
		last = max(last, index)
		pointers = append(pointers, pointer{event: i, index: index})
	}
	if len(pointers) == 0 {
		return events, nil
	}
	entries, err := trace(first, last-first+1)
	if err != nil {
		return nil, fmt.Errorf("read the trace entries of the step_finished events of run %q: %w", id, err)
	}
	for _, p := range pointers {
		at := p.index - first
		if at >= len(entries) {
			return nil, fmt.Errorf("the step_finished event %d of run %q points to trace entry %d, which the store does not hold",
				events[p.event].Seq, id, p.index)
		}
		events[p.event].Step = finishedStep(entries[at], p.index)
	}
	return events, nil
}
