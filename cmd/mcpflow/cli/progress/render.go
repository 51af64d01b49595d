package progress

import (
	"encoding/json"
	"fmt"
	"github.com/mcpflow/mcpflow/api/protocol"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
)

// ANSI sequences of the terminal mode: back to the start of the line and
// erase it.
const eraseLine = "\r\x1b[2K"

// spinner turns once per redraw of the status line.
const spinner = `|/-\`

// maxRunningShown bounds the running steps the status line names.
const maxRunningShown = 3

// render turns a run's events, in sequence order, into text on w: one line
// per event when plain; finished steps as lines under which a status line
// is redrawn in place when opts.Terminal. It is fed by one goroutine and
// formats deterministically from the events and the now it is given.
type render struct {
	w     io.Writer
	opts  Options
	runID string
	err   error // the first write error

	final   Final     // the run's status as the last status event told it
	runAt   int64     // the first event's timestamp (ms); 0 until seen
	lastAt  int64     // the last event's timestamp (ms)
	lastNow time.Time // when the last event came
	now     time.Time // the time of the current event or tick
	spin    int
	shown   bool // a status line is on screen

	started map[stepKey]int64 // steps in flight: when they started (ms)
	// reported is the latest progress of each step in flight, as the
	// status line shows it ("3/5").
	reported map[stepKey]string
	running  []stepKey        // the same, in the order they started
	loops    map[string]*loop // foreach loops by frame id + ":" + node id
	order    []string         // loop keys in the order they started
}

// stepKey is one step in flight: a node in a frame.
type stepKey struct{ frame, node string }

// loop counts the items of one foreach run in one frame.
type loop struct {
	frame, node string
	admitted    int             // items started
	finished    map[string]bool // item frames that ended
	done        bool            // the foreach itself finished
}

func newRender(w io.Writer, runID string, opts Options) *render {
	if opts.Width <= 0 {
		opts.Width = 80
	}
	return &render{w: w, opts: opts, runID: runID, started: map[stepKey]int64{}, reported: map[stepKey]string{}, loops: map[string]*loop{}}
}

// event renders one event, received at now.
func (r *render) event(e protocol.RunEvent, now time.Time) {
	if r.runAt == 0 {
		r.runAt = e.TimestampEpochMs
	}
	r.lastAt, r.lastNow, r.now = e.TimestampEpochMs, now, now
	switch {
	case e.Kind == store.RunEventStepStarted && e.Step != nil:
		r.stepStarted(e)
	case e.Kind == store.RunEventStepFinished && e.Step != nil:
		r.stepFinished(e)
	case e.Kind == store.RunEventStepProgress && e.Step != nil && e.Progress != nil:
		k := stepKey{e.Step.FrameID, e.Step.NodeID}
		r.reported[k] = progressText(e.Progress)
		r.line(fmt.Sprintf("%s: progress %s", r.stepName(k.frame, k.node), r.reported[k]), false)
	case e.Kind == store.RunEventStepLog && e.Step != nil && e.Log != nil:
		r.line(fmt.Sprintf("%s: log %s", r.stepName(e.Step.FrameID, e.Step.NodeID), logText(e.Log)), true)
	case e.Kind == store.RunEventInterrupted && e.Interrupt != nil:
		in := e.Interrupt
		r.line(fmt.Sprintf("%s: interrupt %s (%s) waits for a resume", r.stepName(in.FrameID, in.NodeID), in.ID, in.Kind), true)
	case e.Kind == store.RunEventSessionReplaced && e.Session != nil:
		r.line(sessionReplaced(*e.Session), true)
	case e.Kind == store.RunEventStatusChanged && e.Status != nil:
		r.final = Final{Status: e.Status.Status, Output: e.Status.Output}
		if r.final.Status == store.RunCompleted && r.final.Output == nil {
			r.final.Output = map[string]any{} // an empty output is left out of the event
		}
		if e.Status.Outcome != nil {
			r.final.Outcome = *e.Status.Outcome
		}
		if e.Status.Error != nil {
			r.final.Error = *e.Status.Error
		}
		if !e.Status.Terminal && e.Status.Status != store.RunInterrupted {
			r.line(fmt.Sprintf("run %s: %s", r.runID, e.Status.Status), true)
		}
	}
	r.redraw()
}

// sessionReplaced says that the run's calls on a connection went to a
// new upstream session, which kept nothing of the one before.
func sessionReplaced(s protocol.RunEventSession) string {
	where := s.Connection
	if s.Scope != "" {
		where += " (" + s.Scope + ")"
	}
	restarted := ""
	if s.Restarted {
		restarted = ", opened since mcpflow restarted"
	}
	return fmt.Sprintf("session of %s replaced: generation %d → %d%s; the state of the old session is gone",
		where, s.OldGeneration, s.NewGeneration, restarted)
}

// stepStarted notes a call going out; only plain output shows it as a line.
func (r *render) stepStarted(e protocol.RunEvent) {
	k := stepKey{e.Step.FrameID, e.Step.NodeID}
	if _, ok := r.started[k]; !ok {
		r.started[k] = e.TimestampEpochMs
		r.running = append(r.running, k)
	}
	r.line(fmt.Sprintf("%s: started (%s)", r.stepName(k.frame, k.node), e.Step.Capability), false)
}

// stepFinished prints a finished step with its outcome and elapsed time,
// and counts foreach items: a foreach's "loop" record starts an item (a
// line in plain output only), any other outcome ends the loop.
func (r *render) stepFinished(e protocol.RunEvent) {
	s := e.Step
	name := r.stepName(s.FrameID, s.NodeID)
	var l *loop
	if s.StepType == "foreach" {
		l = r.loopAt(s.FrameID, s.NodeID)
		if s.Outcome == "loop" {
			l.admitted++
			r.line(fmt.Sprintf("%s: item %d started (%s)", name, l.admitted-1, l.progress()), false)
			return
		}
		l.done = true
	}
	var b strings.Builder
	b.WriteString(name + ": " + s.Outcome)
	k := stepKey{s.FrameID, s.NodeID}
	if at, ok := r.started[k]; ok {
		b.WriteString(" in " + duration(e.TimestampEpochMs-at))
		delete(r.started, k)
		delete(r.reported, k)
		r.running = removeKey(r.running, k)
	} else {
		b.WriteString(" at " + duration(e.TimestampEpochMs-r.runAt))
	}
	if s.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", s.Attempts)
	}
	if s.Error != "" {
		b.WriteString(": " + s.Error)
	}
	for _, l := range []*loop{l, r.itemEnded(s)} {
		if l != nil {
			b.WriteString(" (" + l.progress() + ")")
		}
	}
	r.line(b.String(), true)
}

// loopAt is the foreach node runs in frame, a new one when it has not
// started or has ended (a route back to a foreach runs it again).
func (r *render) loopAt(frame, node string) *loop {
	key := frame + ":" + node
	l := r.loops[key]
	if l == nil {
		r.order = append(r.order, key)
	}
	if l == nil || l.done {
		l = &loop{frame: frame, node: node, finished: map[string]bool{}}
		r.loops[key] = l
	}
	return l
}

// itemEnded is the loop whose item s ended, when s is the last step of a
// foreach item (it routes back to the foreach or to the end); nil
// otherwise.
func (r *render) itemEnded(s *protocol.RunEventStep) *loop {
	l, _, ok := r.itemOf(s.FrameID)
	if !ok || (s.NextNodeID != l.node && s.NextNodeID != "__end__") {
		return nil
	}
	l.finished[s.FrameID] = true
	return l
}

// itemOf is the loop whose item frame is frame ("<frame>:<node>:<index>")
// and the item's index.
func (r *render) itemOf(frame string) (*loop, string, bool) {
	i := strings.LastIndexByte(frame, ':')
	if i < 0 {
		return nil, "", false
	}
	if _, err := strconv.Atoi(frame[i+1:]); err != nil {
		return nil, "", false
	}
	l, ok := r.loops[frame[:i]]
	return l, frame[i+1:], ok
}

// progress is how far the loop's items are, e.g. "each: 2 done, 1 running".
func (l *loop) progress() string {
	if l.done { // every item started has ended, skipped ones too
		return fmt.Sprintf("%s: %d done", l.node, l.admitted)
	}
	return fmt.Sprintf("%s: %d done, %d running", l.node, len(l.finished), l.admitted-len(l.finished))
}

// stepName is node, followed by where it ran when not in the root frame:
// "call [each#2]" for item 2 of foreach each, "fetch [sub]" for a step of
// subgraph sub's child workflow.
func (r *render) stepName(frame, node string) string {
	if where := r.frameLabel(frame); where != "" {
		return node + " [" + where + "]"
	}
	return node
}

// frameLabel names frame after the foreach items and subgraphs it is in;
// "" for the root frame, the raw id for a frame it cannot name.
func (r *render) frameLabel(frame string) string {
	if frame == "root" {
		return ""
	}
	if l, index, ok := r.itemOf(frame); ok {
		return join(r.frameLabel(l.frame), l.node+"#"+index)
	}
	if scope, ok := strings.CutSuffix(frame, ":frame"); ok {
		if i := strings.LastIndex(scope, ":subgraph:"); i >= 0 {
			return join(r.frameLabel(scope[:i]), scope[i+len(":subgraph:"):])
		}
	}
	return frame
}

func join(parent, child string) string {
	if parent == "" {
		return child
	}
	return parent + "/" + child
}

// finish prints how the run ended.
func (r *render) finish(f Final) {
	r.clear()
	var b strings.Builder
	fmt.Fprintf(&b, "run %s: %s", r.runID, f.Status)
	if f.Outcome != "" {
		b.WriteString(", outcome " + f.Outcome)
	}
	if r.runAt != 0 && r.lastAt >= r.runAt {
		b.WriteString(", in " + duration(r.lastAt-r.runAt))
	}
	b.WriteString("\n")
	if f.Error != "" {
		b.WriteString("error: " + f.Error + "\n")
	}
	if f.Output != nil {
		data, err := json.MarshalIndent(f.Output, "", "  ")
		if err != nil {
			data = []byte(fmt.Sprintf("(output not JSON: %v)", err))
		}
		b.WriteString("output:\n" + string(data) + "\n")
	}
	r.write(b.String())
}

// tick redraws the status line at now, so that elapsed times move while
// no event comes.
func (r *render) tick(now time.Time) {
	r.now = now
	r.redraw()
}

// line prints text as one line. In terminal mode only lines that are kept
// (finished steps, status changes) are printed, above the status line.
func (r *render) line(text string, keep bool) {
	if r.opts.Terminal && !keep {
		return
	}
	r.clear()
	r.write(text + "\n")
}

// clear erases the status line, if one is shown.
func (r *render) clear() {
	if r.shown {
		r.write(eraseLine)
		r.shown = false
	}
}

// redraw draws the status line again (terminal mode only).
func (r *render) redraw() {
	if status := r.final.Status; !r.opts.Terminal || status == "" || store.Terminal(status) || status == store.RunInterrupted {
		return
	}
	text := r.statusLine()
	r.spin++
	r.write(eraseLine + text)
	r.shown = true
}

// statusLine is the spinner, the run's elapsed time, the steps in flight
// and the foreach loops in progress, cut to the terminal's width.
func (r *render) statusLine() string {
	// The server's clock now, as the last event's time plus what passed
	// here since it came.
	serverNow := r.lastAt + max(r.now.Sub(r.lastNow), 0).Milliseconds()
	parts := []string{fmt.Sprintf("%c %s %s", spinner[r.spin%len(spinner)], r.final.Status, duration(serverNow-r.runAt))}
	for i, k := range r.running {
		if i == maxRunningShown {
			parts = append(parts, fmt.Sprintf("+%d more", len(r.running)-i))
			break
		}
		part := r.stepName(k.frame, k.node) + " " + duration(serverNow-r.started[k])
		if p := r.reported[k]; p != "" {
			part += " " + p
		}
		parts = append(parts, part)
	}
	for _, key := range r.order {
		if l := r.loops[key]; !l.done {
			parts = append(parts, l.progress())
		}
	}
	return truncate(strings.Join(parts, " | "), r.opts.Width-1)
}

func (r *render) write(s string) {
	if r.err != nil {
		return
	}
	if _, err := io.WriteString(r.w, s); err != nil {
		r.err = fmt.Errorf("write progress: %w", err)
	}
}

// truncate cuts s to at most n runes, marking a cut with "…".
func truncate(s string, n int) string {
	runes := []rune(s)
	if len(runes) <= n {
		return s
	}
	if n <= 1 {
		return string(runes[:max(n, 0)])
	}
	return string(runes[:n-1]) + "…"
}

// duration formats ms for people: "850ms" under a second, "1.2s", "1m5s".
func duration(ms int64) string {
	d := time.Duration(max(ms, 0)) * time.Millisecond
	switch {
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	default:
		return d.Round(time.Second).String()
	}
}

func removeKey(keys []stepKey, k stepKey) []stepKey {
	for i, x := range keys {
		if x == k {
			return append(keys[:i], keys[i+1:]...)
		}
	}
	return keys
}

// progressText is a step's progress as people read it: "3/5", "40%"
// when the upstream counts in fractions of 1 or 100, or "3" without a
// total; its message follows.
func progressText(p *protocol.RunEventProgress) string {
	text := strconv.FormatFloat(p.Progress, 'f', -1, 64)
	if p.Total != nil {
		text += "/" + strconv.FormatFloat(*p.Total, 'f', -1, 64)
	}
	if p.Message != "" {
		text += " " + p.Message
	}
	return text
}

// logText is a step's log message on one line: its level, its logger
// and its data (a string as it is, anything else as JSON), at most 200
// runes of it.
func logText(l *protocol.RunEventLog) string {
	var data string
	if err := json.Unmarshal(l.Data, &data); err != nil {
		data = string(l.Data)
	}
	text := l.Level
	if l.Logger != "" {
		text += " " + l.Logger
	}
	text += ": " + strings.Join(strings.Fields(data), " ")
	return truncate(text, 200)
}
