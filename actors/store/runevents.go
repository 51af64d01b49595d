package store

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// Run event kinds, in the order one commit appends them.
const (
	// RunEventStepFinished: a step ended; it has a trace entry.
	RunEventStepFinished = "step_finished"
	// RunEventStepStarted: a step's call (a tool, a resource read or a
	// built-in) was committed as in flight; it goes out after the commit.
	RunEventStepStarted = "step_started"
	// RunEventInterrupted: the run paused in an interrupt, waiting for a
	// resume.
	RunEventInterrupted = "interrupted"
	// RunEventStatusChanged: the run's status changed (or it was created).
	RunEventStatusChanged = "status"
	// RunEventStepProgress: the upstream of a step's call in flight
	// reported its progress (notifications/progress), coalesced: the
	// latest of an interval (see LiveEvents).
	RunEventStepProgress = "step_progress"
	// RunEventStepLog: the upstream of a step's call in flight sent a log
	// message (notifications/message), up to a cap per step.
	RunEventStepLog = "step_log"
	// RunEventSessionReplaced: a call of the run went to another upstream
	// session than the run's earlier calls on the same connection (and
	// session scope): whatever the server kept for the earlier session is
	// gone. Appended by the commit of the step that saw the new session,
	// before its step_finished.
	RunEventSessionReplaced = "session_replaced"
)

// RunEvent is one entry of a run's event log: what one commit of the run
// changed, as a client following the run sees it. The store appends a
// run's events in the transaction that commits the change (CreateRun,
// RecordProgress, RecoverRunning) and numbers them per run from 1, with no
// gap; a reader that resumes after the last sequence it saw misses nothing
// and sees nothing twice, live or after a restart.
type RunEvent struct {
	RunID            string `json:"run_id"`
	Seq              int64  `json:"sequence"`
	Kind             string `json:"kind"`
	TimestampEpochMs int64  `json:"timestamp_epoch_ms"`
	// Step is set for step_started, step_finished, step_progress and
	// step_log.
	Step *RunEventStep `json:"step,omitempty"`
	// Interrupt is set for interrupted.
	Interrupt *workflow.Interrupt `json:"interrupt,omitempty"`
	// Status is set for status.
	Status *RunEventStatus `json:"status,omitempty"`
	// Progress is set for step_progress, with Step naming the call.
	Progress *RunEventProgress `json:"progress,omitempty"`
	// Log is set for step_log, with Step naming the call.
	Log *RunEventMessage `json:"log,omitempty"`
	// Session is set for session_replaced.
	Session *RunEventSession `json:"session,omitempty"`
}

// RunEventProgress is what a step_progress event reports: the
// notifications/progress of the step's call, as the upstream sent it.
type RunEventProgress struct {
	Progress float64 `json:"progress"`
	// Total is nil when the upstream did not say.
	Total   *float64 `json:"total,omitempty"`
	Message string   `json:"message,omitempty"`
}

// RunEventMessage is what a step_log event reports: a notifications/message
// the upstream sent during the step's call. Data is the message's data,
// bounded: when it was longer, it is a JSON string holding the start of
// its JSON text, and Truncated is set. Dropped, on the one event mcpflow
// adds once a step's cap is passed, counts the messages not kept.
type RunEventMessage struct {
	Level     string          `json:"level"`
	Logger    string          `json:"logger,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	Truncated bool            `json:"truncated,omitempty"`
	Dropped   int             `json:"dropped,omitempty"`
}

// RunEventSession is the replacement a session_replaced event tells of:
// the connection, the session scope ("" for the shared session), the
// generation the run's calls went to before and the one they go to now.
// Restarted is set when the new session was opened by a later mcpflow
// process than the old one (on a node alone, generations count from 1
// again at every start).
type RunEventSession struct {
	Connection    string `json:"connection"`
	Scope         string `json:"scope,omitempty"`
	OldGeneration int64  `json:"old_generation"`
	NewGeneration int64  `json:"new_generation"`
	Restarted     bool   `json:"restarted,omitempty"`
}

// RunEventStep is the step of a step_started or step_finished event.
type RunEventStep struct {
	FrameID string `json:"frame_id"`
	NodeID  string `json:"node_id"`
	// CallID and Capability name the call of a step_started.
	CallID     string `json:"call_id,omitempty"`
	Capability string `json:"capability,omitempty"`
	// The rest describe a step_finished: where its trace entry is, how it
	// ended, and the state paths it changed (sorted), not their values.
	TraceIndex   *int     `json:"trace_index,omitempty"`
	StepType     string   `json:"step_type,omitempty"`
	Outcome      string   `json:"outcome,omitempty"`
	NextNodeID   string   `json:"next_node_id,omitempty"`
	StateChanges []string `json:"state_changes,omitempty"`
	Attempts     int      `json:"attempts,omitempty"`
	Error        string   `json:"error,omitempty"`
}

// RunEventStatus is the status of a status event. Terminal is set when
// the run has ended (completed, failed or cancelled): no event follows.
type RunEventStatus struct {
	Status     string          `json:"status"`
	Terminal   bool            `json:"terminal"`
	Outcome    *string         `json:"outcome,omitempty"`
	Error      *string         `json:"error,omitempty"`
	Output     workflow.Object `json:"output,omitempty"`
	TraceCount int             `json:"trace_count"`
}

// RunEventLog reads the event logs of runs.
type RunEventLog interface {
	// ReadRunEvents returns, in sequence order, up to limit events of a
	// run whose sequence number is greater than afterSeq (limit <= 0 for
	// no limit), and the sequence number of the run's last event (0 while
	// it has none), both from one snapshot; ErrNotFound if the run does
	// not exist.
	ReadRunEvents(ctx context.Context, runID string, afterSeq int64, limit int) (events []RunEvent, last int64, err error)
}

// RunLiveEvents appends what a run's calls report while they run
// (step_progress, step_log) to its event log, between the run's commits.
type RunLiveEvents interface {
	// AppendRunEvents appends events to the log of run runID, numbered
	// after its last event (their RunID and Seq are set by the store), in
	// one transaction. ErrNotFound if the run does not exist; ErrConflict
	// if it has ended (no event follows a terminal status); a store shared
	// by a cluster refuses a run another node runs (ErrFenced), as
	// RecordProgress does.
	AppendRunEvents(ctx context.Context, runID string, events []RunEvent) error
}

// NumberRunEvents returns events as the log of run id takes them after
// its event lastSeq: each names the run and has the next sequence number.
func NumberRunEvents(id string, events []RunEvent, lastSeq int64) []RunEvent {
	out := make([]RunEvent, len(events))
	for i, e := range events {
		e.RunID, e.Seq = id, lastSeq+int64(i)+1
		out[i] = e
	}
	return out
}

// Terminal reports whether a run status is final: completed, failed or
// cancelled.
func Terminal(status string) bool {
	return status == RunCompleted || status == RunFailed || status == RunCancelled
}

// NewRunEvents returns the events of one commit that takes a run from
// prev (nil when the commit creates it) to next, appending entries to its
// trace; they are numbered from lastSeq+1. In order: a session_replaced
// per replacement next.Replaced tells of, a step_finished per entry, a step_started per call next lists as in flight that prev did
// not (in the order they were issued), interrupted when the run pauses in
// a new interrupt, and status when the status changes. A run created with
// its first steps has a status event "running" before them. Implementations of
// Store call it in the transaction of the commit, so that they agree.
func NewRunEvents(prev *Run, next Run, entries []workflow.TraceEntry, lastSeq int64) []RunEvent {
	var events []RunEvent
	add := func(e RunEvent) {
		e.RunID, e.TimestampEpochMs = next.ID, next.UpdatedAt.UnixMilli()
		e.Seq = lastSeq + int64(len(events)) + 1
		events = append(events, e)
	}
	first := next.TraceCount - len(entries)
	calls := newCalls(prev, next)
	if prev == nil && len(entries)+len(calls) > 0 {
		// A run created with its first steps ran them: it was running
		// before they started.
		add(RunEvent{Kind: RunEventStatusChanged, Status: &RunEventStatus{Status: RunRunning, TraceCount: first}})
		prev = &Run{Status: RunRunning}
	}
	for _, r := range next.Replaced {
		add(RunEvent{Kind: RunEventSessionReplaced, Session: &r})
	}
	for i, entry := range entries {
		add(RunEvent{Kind: RunEventStepFinished, Step: finishedStep(entry, first+i)})
	}
	for _, c := range calls {
		add(RunEvent{Kind: RunEventStepStarted, Step: &RunEventStep{FrameID: c.FrameID, NodeID: c.NodeID, CallID: c.ID, Capability: c.Capability}})
	}
	if next.Status == RunInterrupted && next.Interrupt != nil &&
		(prev == nil || prev.Status != RunInterrupted || prev.Interrupt == nil || prev.Interrupt.ID != next.Interrupt.ID) {
		add(RunEvent{Kind: RunEventInterrupted, Interrupt: next.Interrupt})
	}
	if prev == nil || prev.Status != next.Status {
		st := &RunEventStatus{Status: next.Status, Terminal: Terminal(next.Status), Outcome: next.Outcome, Error: next.Error, TraceCount: next.TraceCount}
		if next.Status == RunCompleted {
			st.Output = next.Output
		}
		add(RunEvent{Kind: RunEventStatusChanged, Status: st})
	}
	return events
}

// finishedStep describes the step that trace entry e, at index i, records.
func finishedStep(e workflow.TraceEntry, i int) *RunEventStep {
	return &RunEventStep{
		FrameID: e.FrameID, NodeID: e.NodeID, TraceIndex: &i, StepType: e.StepType,
		Outcome: e.Outcome, NextNodeID: e.NextNodeID, StateChanges: slices.Sorted(maps.Keys(e.StateChanges)),
		Attempts: e.Attempts, Error: e.Error,
	}
}

// newCalls returns the calls next's checkpoint lists as in flight and
// prev's does not, in the order they were issued (call ids are "c" and a
// counter: shorter ids first, then by text).
func newCalls(prev *Run, next Run) []workflow.Call {
	if next.Checkpoint == nil {
		return nil
	}
	var calls []workflow.Call
	for id, c := range next.Checkpoint.Calls {
		if prev != nil && prev.Checkpoint != nil {
			if _, seen := prev.Checkpoint.Calls[id]; seen {
				continue
			}
		}
		calls = append(calls, c)
	}
	slices.SortFunc(calls, func(a, b workflow.Call) int {
		return cmp.Or(cmp.Compare(len(a.ID), len(b.ID)), strings.Compare(a.ID, b.ID))
	})
	return calls
}

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
