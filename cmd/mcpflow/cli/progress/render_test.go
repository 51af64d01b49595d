package progress

import (
	"bytes"
	"github.com/mcpflow/mcpflow/api/protocol"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
)

// t0 is the fake runs' start, in ms since the epoch.
const t0 = 1_700_000_000_000

// stream makes a run's events, numbered from 1, at times relative to t0.
type stream struct {
	run    string
	events []protocol.RunEvent
}

func (s *stream) add(ms int64, e protocol.RunEvent) *stream {
	e.RunID, e.Seq, e.TimestampEpochMs = s.run, int64(len(s.events)+1), t0+ms
	s.events = append(s.events, e)
	return s
}

func (s *stream) status(ms int64, status string, outcome, errText string, output map[string]any) *stream {
	st := &protocol.RunEventStatus{Status: status, Terminal: store.Terminal(status), Output: output}
	if outcome != "" {
		st.Outcome = &outcome
	}
	if errText != "" {
		st.Error = &errText
	}
	return s.add(ms, protocol.RunEvent{Kind: store.RunEventStatusChanged, Status: st})
}

func (s *stream) started(ms int64, frame, node, capability string) *stream {
	return s.add(ms, protocol.RunEvent{Kind: store.RunEventStepStarted, Step: &protocol.RunEventStep{FrameID: frame, NodeID: node, Capability: capability}})
}

func (s *stream) finished(ms int64, frame, node, stepType, outcome, next string) *stream {
	return s.add(ms, protocol.RunEvent{Kind: store.RunEventStepFinished, Step: &protocol.RunEventStep{FrameID: frame, NodeID: node, StepType: stepType, Outcome: outcome, NextNodeID: next, Attempts: 1}})
}

// call is a tool step of frame that starts at from and ends at to.
func (s *stream) call(from, to int64, frame, node, outcome, next string) *stream {
	return s.started(from, frame, node, "fake.sleep").finished(to, frame, node, "node", outcome, next)
}

// play renders the stream's events as Follow does, each received 5 ms
// after its timestamp, and the end of the run when one ends it.
func (s *stream) play(opts Options) string {
	var out bytes.Buffer
	r := newRender(&out, s.run, opts)
	for _, e := range s.events {
		r.event(e, time.UnixMilli(e.TimestampEpochMs+5))
	}
	if r.final.Status != "" && r.final.Status != store.RunRunning {
		r.finish(r.final)
	}
	return out.String()
}

// sequential is a run of three tool steps, the last of which routes its
// error outcome to the end.
func sequential() *stream {
	s := &stream{run: "run_1"}
	return s.status(0, "running", "", "", nil).
		call(2, 310, "root", "a", "ok", "b").
		call(310, 1620, "root", "b", "ok", "c").
		call(1620, 1630, "root", "c", "error", "__end__").
		status(1630, "completed", "ok", "", map[string]any{"x": map[string]any{"slept_ms": 300}, "n": 2})
}

func TestPlainLinesOneAnEventWithElapsedTimesAndTheOutput(t *testing.T) {
	is := is.New(t)
	got := sequential().play(Options{})
	want := `run run_1: running
a: started (fake.sleep)
a: ok in 308ms
b: started (fake.sleep)
b: ok in 1.3s
c: started (fake.sleep)
c: error in 10ms
run run_1: completed, outcome ok, in 1.6s
output:
{
  "n": 2,
  "x": {
    "slept_ms": 300
  }
}
`
	is.Equal(got, want)                         // one plain line an event, then the end
	is.True(!strings.Contains(got, "\x1b"))     // no escape codes
	is.True(!strings.Contains(got, "\r"))       // no carriage returns
	is.Equal(got, sequential().play(Options{})) // deterministic
}

// foreach is a run of a serial foreach over three items, each one call
// that routes back to the foreach.
func foreach() *stream {
	s := &stream{run: "run_2"}
	s.status(0, "running", "", "", nil)
	at := int64(0)
	for i := range 3 {
		item := "root:each:" + string(rune('0'+i))
		s.finished(at+1, "root", "each", "foreach", "loop", "call").call(at+1, at+60, item, "call", "ok", "each")
		at += 60
	}
	return s.finished(at, "root", "each", "foreach", "done", "__end__").status(at, "completed", "ok", "", map[string]any{})
}

func TestPlainForeachCountsItems(t *testing.T) {
	is := is.New(t)
	want := `run run_2: running
each: item 0 started (each: 0 done, 1 running)
call [each#0]: started (fake.sleep)
call [each#0]: ok in 59ms (each: 1 done, 0 running)
each: item 1 started (each: 1 done, 1 running)
call [each#1]: started (fake.sleep)
call [each#1]: ok in 59ms (each: 2 done, 0 running)
each: item 2 started (each: 2 done, 1 running)
call [each#2]: started (fake.sleep)
call [each#2]: ok in 59ms (each: 3 done, 0 running)
each: done at 180ms (each: 3 done)
run run_2: completed, outcome ok, in 180ms
output:
{}
`
	is.Equal(foreach().play(Options{}), want)
}

func TestNestedForeachEndsItsOuterItem(t *testing.T) {
	is := is.New(t)
	s := (&stream{run: "run_n"}).status(0, "running", "", "", nil).
		finished(1, "root", "rows", "foreach", "loop", "cols").
		finished(2, "root:rows:0", "cols", "foreach", "loop", "cell").
		call(2, 10, "root:rows:0:cols:0", "cell", "ok", "cols").
		finished(10, "root:rows:0", "cols", "foreach", "done", "rows"). // the inner loop ends the outer item
		finished(10, "root", "rows", "foreach", "done", "__end__")
	want := `run run_n: running
rows: item 0 started (rows: 0 done, 1 running)
cols [rows#0]: item 0 started (cols: 0 done, 1 running)
cell [rows#0/cols#0]: started (fake.sleep)
cell [rows#0/cols#0]: ok in 8ms (cols: 1 done, 0 running)
cols [rows#0]: done at 10ms (cols: 1 done) (rows: 1 done, 0 running)
rows: done at 10ms (rows: 1 done)
`
	is.Equal(s.play(Options{}), want)
}

func TestTerminalPrintsFinishedStepsAboveARedrawnStatusLine(t *testing.T) {
	is := is.New(t)
	s := &stream{run: "run_3"}
	s.status(0, "running", "", "", nil).
		call(0, 300, "root", "a", "ok", "b").
		status(300, "failed", "", "step b: boom", nil)
	got := s.play(Options{Terminal: true, Width: 40})
	want := "run run_3: running\n" +
		eraseLine + `| running 0ms` + // the status line after the status event
		eraseLine + `/ running 0ms | a 0ms` + // a started
		eraseLine + "a: ok in 300ms\n" + // a finished: a line above...
		eraseLine + `- running 300ms` + // ...and the status line again
		eraseLine + "run run_3: failed, in 300ms\nerror: step b: boom\n"
	is.Equal(got, want)
}

func TestTerminalTicksMoveElapsedTimes(t *testing.T) {
	is := is.New(t)
	var out bytes.Buffer
	r := newRender(&out, "run_4", Options{Terminal: true})
	s := (&stream{run: "run_4"}).status(0, "running", "", "", nil).started(100, "root", "a", "fake.sleep")
	for _, e := range s.events {
		r.event(e, time.UnixMilli(e.TimestampEpochMs))
	}
	out.Reset()
	r.tick(time.UnixMilli(t0 + 2100))
	is.Equal(out.String(), eraseLine+`- running 2.1s | a 2.0s`) // both clocks moved on with no event
}

func TestTerminalStatusLineFitsTheWidth(t *testing.T) {
	is := is.New(t)
	s := (&stream{run: "run_5"}).status(0, "running", "", "", nil)
	for _, node := range []string{"alpha", "bravo", "charlie", "delta", "echo"} {
		s.started(0, "root", node, "fake.sleep")
	}
	for _, width := range []int{20, 50, 200} {
		var out bytes.Buffer
		r := newRender(&out, "run_5", Options{Terminal: true, Width: width})
		for _, e := range s.events {
			r.event(e, time.UnixMilli(e.TimestampEpochMs))
		}
		last := out.String()[strings.LastIndex(out.String(), eraseLine)+len(eraseLine):]
		is.True(len([]rune(last)) <= width-1) // never wraps, so \r redraws it
		if width == 200 {
			is.Equal(last, `/ running 0ms | alpha 0ms | bravo 0ms | charlie 0ms | +2 more`) // at most three steps named
		}
	}
	r := newRender(&bytes.Buffer{}, "run_5", Options{})
	is.Equal(r.opts.Width, 80) // width 0 is 80
}

func TestTerminalStatusLineShowsForeachProgress(t *testing.T) {
	is := is.New(t)
	s := (&stream{run: "run_6"}).status(0, "running", "", "", nil).
		finished(1, "root", "each", "foreach", "loop", "call").
		finished(1, "root", "each", "foreach", "loop", "call").
		call(1, 50, "root:each:0", "call", "ok", "__end__").
		started(50, "root:each:1", "call", "fake.sleep")
	got := s.play(Options{Terminal: true, Width: 100})
	is.True(strings.HasSuffix(got, eraseLine+`/ running 50ms | call [each#1] 0ms | each: 1 done, 1 running`)) // the loop's items on the status line
	is.True(strings.Contains(got, "call [each#0]: ok in 49ms (each: 1 done, 1 running)\n"))                   // the item's end above it
	is.True(!strings.Contains(got, "started"))                                                                // starts only show on the status line
}

func TestFrameLabelsNameItemsAndSubgraphs(t *testing.T) {
	is := is.New(t)
	r := newRender(&bytes.Buffer{}, "run_7", Options{})
	for _, e := range (&stream{run: "run_7"}).
		finished(0, "root", "outer", "foreach", "loop", "x").
		finished(0, "root:outer:0", "inner", "foreach", "loop", "x").
		finished(0, "root:outer:0:inner:3:subgraph:sub:frame", "deep", "foreach", "loop", "x").events {
		r.event(e, time.UnixMilli(t0))
	}
	for frame, want := range map[string]string{
		"root":                 "step",
		"root:outer:0":         "step [outer#0]",
		"root:outer:0:inner:3": "step [outer#0/inner#3]",
		"root:outer:0:inner:3:subgraph:sub:frame":         "step [outer#0/inner#3/sub]",
		"root:outer:0:inner:3:subgraph:sub:frame:deep:12": "step [outer#0/inner#3/sub/deep#12]",
		"root:subgraph:child:frame":                       "step [child]",
		"root:unknown:1":                                  "step [root:unknown:1]", // no such loop: the raw id
	} {
		is.Equal(r.stepName(frame, "step"), want)
	}
}

func TestInterruptIsShownAndEndsTheView(t *testing.T) {
	is := is.New(t)
	s := (&stream{run: "run_8"}).status(0, "running", "", "", nil).
		add(10, protocol.RunEvent{Kind: store.RunEventInterrupted, Interrupt: interruptAt("approve")}).
		status(10, "interrupted", "", "", nil)
	is.Equal(s.play(Options{Terminal: true}), "run run_8: running\n"+
		eraseLine+"| running 0ms"+
		eraseLine+"approve: interrupt interrupt:approve (approval) waits for a resume\n"+
		eraseLine+"/ running 10ms"+
		eraseLine+"run run_8: interrupted, in 10ms\n") // the status line erased at the end
}

func TestAReplacedSessionIsALine(t *testing.T) {
	is := is.New(t)
	s := (&stream{run: "run_9"}).status(0, "running", "", "", nil).
		add(10, protocol.RunEvent{Kind: store.RunEventSessionReplaced, Session: &protocol.RunEventSession{Connection: "pw.default", OldGeneration: 1, NewGeneration: 2}}).
		add(10, protocol.RunEvent{Kind: store.RunEventSessionReplaced, Session: &protocol.RunEventSession{Connection: "db.prod", Scope: "run:run_9", OldGeneration: 1, NewGeneration: 1, Restarted: true}})
	is.Equal(s.play(Options{}), "run run_9: running\n"+
		"session of pw.default replaced: generation 1 → 2; the state of the old session is gone\n"+
		"session of db.prod (run:run_9) replaced: generation 1 → 1, opened since mcpflow restarted; the state of the old session is gone\n")
}

// interruptAt is an approval interrupt at the root frame's node.
func interruptAt(node string) *protocol.Interrupt {
	return &protocol.Interrupt{ID: "interrupt:" + node, FrameID: "root", NodeID: node, Kind: "approval"}
}

func TestDurations(t *testing.T) {
	is := is.New(t)
	for ms, want := range map[int64]string{-5: "0ms", 0: "0ms", 999: "999ms", 1000: "1.0s", 1250: "1.2s", 59_949: "59.9s", 65_400: "1m5s", 3_723_000: "1h2m3s"} {
		is.Equal(duration(ms), want)
	}
}

func TestAWriteErrorIsKept(t *testing.T) {
	is := is.New(t)
	r := newRender(failingWriter{}, "run_9", Options{})
	r.line("x", true)
	is.True(r.err != nil) // the first write error is kept for Follow to return
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, bytes.ErrTooLarge }

func TestAStepsProgressAndLogsShowWhileItRuns(t *testing.T) {
	is := is.New(t)
	var out strings.Builder
	r := newRender(&out, "run_1", Options{})
	at := time.UnixMilli(1000)
	step := &protocol.RunEventStep{FrameID: "root", NodeID: "call", CallID: "c1"}
	total := 5.0
	r.event(protocol.RunEvent{Kind: store.RunEventStepStarted, TimestampEpochMs: 1000, Step: &protocol.RunEventStep{FrameID: "root", NodeID: "call", Capability: "srv.long"}}, at)
	r.event(protocol.RunEvent{Kind: store.RunEventStepProgress, TimestampEpochMs: 1500, Step: step, Progress: &protocol.RunEventProgress{Progress: 2, Total: &total, Message: "copying"}}, at)
	r.event(protocol.RunEvent{Kind: store.RunEventStepLog, TimestampEpochMs: 1600, Step: step, Log: &protocol.RunEventLog{Level: "info", Logger: "srv", Data: []byte(`"half\nway"`)}}, at)
	is.Equal(out.String(), "call: started (srv.long)\ncall: progress 2/5 copying\ncall: log info srv: half way\n")
}
