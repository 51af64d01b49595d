package workflow

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrReplay means that a replay (Replay) cannot reach its fork point
// from the recorded trace: the fork point is not one, or the execution
// asked for a step the trace does not hold.
var ErrReplay = errors.New("cannot replay the run")

// Replay is a new execution of program p on input that replays recorded,
// the whole trace of an earlier execution of p on the same input, up to
// the first time its root frame reaches step from (ForkPoints): each call
// the execution hands out before is completed with the result recorded
// for it (the same frame and step, in order), without calling anything;
// each interrupt is resumed with the outcome and payload recorded; pure
// steps run again and must route as they did. It answers the execution
// stopped there, the root frame ready at from with no call outstanding,
// and the trace entries the replay made, marked Replayed: a driver
// commits both, then advances the execution from from on.
func Replay(p Program, input Object, opts Options, recorded []TraceEntry, from string) (*Execution, []TraceEntry, error) {
	e, err := NewExecution(p, input, opts)
	if err != nil {
		return nil, nil, err
	}
	r := replay{e: e, book: newRecordBook(recorded), from: from}
	if err := r.run(); err != nil {
		return nil, nil, fmt.Errorf("%w up to step %q: %w", ErrReplay, from, err)
	}
	return e, r.out, nil
}

// replay drives an execution from a recorded trace.
type replay struct {
	e    *Execution
	book recordBook
	from string
	out  []TraceEntry
}

// at reports whether the root frame is ready at the fork point.
func (r *replay) at() bool {
	f := r.e.snap.Frames[rootFrame]
	return f != nil && f.Status == FrameReady && f.Node == r.from
}

func (r *replay) run() error {
	for !r.at() {
		switch r.e.snap.Status {
		case StatusRunning:
		case StatusInterrupted:
			if err := r.resume(); err != nil {
				return err
			}
			continue
		default:
			return fmt.Errorf("the replay %s before it reached the step: %s", r.e.snap.Status, r.e.snap.Error)
		}
		p := r.e.AdvanceSteps(0, r.at)
		if err := r.take(p.Trace); err != nil {
			return err
		}
		if r.at() || r.e.snap.Status != StatusRunning {
			continue
		}
		calls := r.e.Outstanding()
		if len(calls) == 0 && !p.More {
			return errors.New("the replay waits on nothing the recorded trace holds")
		}
		if err := r.complete(calls); err != nil {
			return err
		}
	}
	// What the last completion or resume recorded is not collected by an
	// Advance: the fork point's step is the driver's to run.
	held := r.e.trace
	r.e.trace, r.e.calls = nil, nil
	return r.take(held)
}

// complete completes calls with their recorded results, in the order
// the recorded trace holds them.
func (r *replay) complete(calls []Call) error {
	at := make(map[string]int, len(calls))
	for _, c := range calls {
		i, ok := r.book.peek(c.FrameID, c.NodeID)
		if !ok {
			return fmt.Errorf("step %q (frame %s) makes a call whose result the recorded trace does not hold", c.NodeID, c.FrameID)
		}
		at[c.ID] = i
	}
	slices.SortFunc(calls, func(a, b Call) int { return at[a.ID] - at[b.ID] })
	for _, c := range calls {
		t := r.book.entries[at[c.ID]]
		res := Result{Outcome: t.Outcome, Output: t.Output, Content: t.Content, Attempts: t.Attempts,
			Generation: t.Generation, Node: t.Node, Epoch: t.Epoch, Upstream: t.Upstream, TaskID: t.TaskID}
		if err := r.e.Complete(c.ID, res); err != nil {
			return err
		}
	}
	return nil
}

// resume resumes the interrupt the execution waits in as the recorded
// trace says it was: the entry after the one of its pause.
func (r *replay) resume() error {
	f := r.e.pendingInterrupt()
	if f == nil {
		return errors.New("the replay is interrupted with no pause")
	}
	i, ok := r.book.peek(f.ID, f.Node)
	if !ok {
		return fmt.Errorf("step %q paused, and the recorded trace holds no resume of it", f.Node)
	}
	t := r.book.entries[i]
	return r.e.Resume(t.Outcome, t.Output)
}

// take checks each entry the replay made against the one recorded for
// its frame and step, and keeps it, marked Replayed.
func (r *replay) take(entries []TraceEntry) error {
	for _, t := range entries {
		i, ok := r.book.pop(t.FrameID, t.NodeID)
		if !ok {
			return fmt.Errorf("step %q (frame %s) ran more often than the recorded trace holds", t.NodeID, t.FrameID)
		}
		if rec := r.book.entries[i]; rec.Outcome != t.Outcome {
			return fmt.Errorf("step %q (frame %s) routed %q, where the recorded trace routed %q", t.NodeID, t.FrameID, t.Outcome, rec.Outcome)
		}
		t.Replayed = true
		r.out = append(r.out, t)
	}
	return nil
}

// recordBook indexes a recorded trace by frame and step: each frame's
// steps run in order, so the k-th entry of a frame's step answers its
// k-th execution.
type recordBook struct {
	entries []TraceEntry
	next    map[string][]int
}

func newRecordBook(entries []TraceEntry) recordBook {
	b := recordBook{entries: entries, next: map[string][]int{}}
	for i, t := range entries {
		k := t.FrameID + "\x00" + t.NodeID
		b.next[k] = append(b.next[k], i)
	}
	return b
}

// peek is the index of the next recorded entry of frame's step.
func (b recordBook) peek(frame, node string) (int, bool) {
	q := b.next[frame+"\x00"+node]
	if len(q) == 0 {
		return 0, false
	}
	return q[0], true
}

// pop is peek, and takes the entry.
func (b recordBook) pop(frame, node string) (int, bool) {
	i, ok := b.peek(frame, node)
	if ok {
		k := frame + "\x00" + node
		b.next[k] = b.next[k][1:]
	}
	return i, ok
}

// ForkPoints are the steps a fork of a run may start from, in the order
// the run first reached them: the steps of its root workflow's main line
// (not a foreach body's, not a subgraph's) that its trace, recorded,
// shows it executed or routed to, and the step its checkpoint (nil for
// none) stopped at. Every step executed before the first arrival at one
// of them is in the trace, which is what Replay needs.
func ForkPoints(recorded []TraceEntry, stopped *Snapshot) []string {
	var points []string
	add := func(node string) {
		if node != "" && node != End && !slices.Contains(points, node) {
			points = append(points, node)
		}
	}
	for _, t := range recorded {
		if t.FrameID != rootFrame {
			continue
		}
		add(t.NodeID)
		if t.Outcome != OutcomeLoop {
			add(t.NextNodeID)
		}
	}
	if stopped != nil {
		if f := stopped.Frames[rootFrame]; f != nil && f.Status != FrameDone {
			add(f.Node)
		}
	}
	return points
}

// InForeachBody reports whether the recorded trace shows step node
// executing in a foreach item of the root workflow.
func InForeachBody(recorded []TraceEntry, node string) bool {
	return slices.ContainsFunc(recorded, func(t TraceEntry) bool {
		return t.NodeID == node && t.FrameID != rootFrame && !strings.Contains(t.FrameID, ":subgraph:")
	})
}
