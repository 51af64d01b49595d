package integration

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime/trace"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"
	xtrace "golang.org/x/exp/trace"

	"github.com/mcpflow/mcpflow/actors/store"
)

// warmRunWakesBound fails TestAWarmOneStepRunWakesWithinItsBound: the
// goroutine wakes of a warm one-step run, counted as docs/performance.md
// counts them ("Goroutine wakes"), in the median of wakeSamples runs.
//
//	issue 22's count (2026-12-02, the live hub waking at each commit):  26
//	before issue 32 (2026-12-07, 66eedef; this test):                    21
//	a commit reported by the store's writer, no goroutine per commit:  15
//	a reply written by its request when the writer is idle (edge):     14
//	the session reads its own stdio (no go-sdk line reader):           13
//	a call over the session actor's line, not through the supervisor:  12
//	bound: issue 32's target, the median (11 to 13 from run to run)
const warmRunWakesBound = 12

// wakeSamples is how many runs are traced; their median is kept, since
// hollywood's scheduling moves a wake or two from run to run (an actor's
// inbox goroutine still draining, or parked, when the next message lands).
const wakeSamples = 7

// TestAWarmOneStepRunWakesWithinItsBound counts the goroutines made
// runnable (created, or woken from waiting) in the mcpflow process while
// a warm one-step workflow.runs.start goes through /ws: an in-process
// mcpflow on the in-memory store, its stdio session to a demo-server
// subprocess open, the deployment prepared. The test's client is left
// out, as are the runtime's own goroutines (the collector, the tracer).
func TestAWarmOneStepRunWakesWithinItsBound(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector changes the schedule being counted")
	}
	is := is.New(t)
	run := warmDemoRun(t)
	var counts []int
	var legs []map[string]int
	for range wakeSamples {
		var buf bytes.Buffer
		is.NoErr(trace.Start(&buf))
		run()
		trace.Stop()
		n, byStart, err := countWakes(&buf)
		is.NoErr(err)
		counts = append(counts, n)
		legs = append(legs, byStart)
	}
	median := slices.Sorted(slices.Values(counts))[len(counts)/2]
	i := slices.Index(counts, median)
	t.Logf("wakes per warm one-step run: median %d (bound %d), all %v; the median's, by the goroutine woken:\n%s",
		median, warmRunWakesBound, counts, formatLegs(legs[i]))
	is.True(median <= warmRunWakesBound) // a warm one-step run wakes no more goroutines than its bound
}

// warmDemoRun starts an in-process mcpflow on the in-memory store with
// a stdio demo-server source, and returns its warm run (warmRun).
func warmDemoRun(t *testing.T) func() {
	t.Helper()
	svc := startServiceWith(t, store.NewMemory(), nil, stdioSource("demo.default", binary, "demo-server"))
	return warmRun(t, svc, "demo.default", 30)
}

// notMcpflow are the entry functions of goroutines a wake of which is not
// the run's: the runtime's, the tracer's, the test's and its client's,
// and the stall monitor's tick, which wakes every few milliseconds
// whatever runs (docs/performance.md left it out too).
var notMcpflow = []string{
	"runtime.", "runtime/trace.",
	"github.com/mcpflow/mcpflow/actors/session.(*StallMonitor).",
	"testing.", "github.com/mcpflow/mcpflow/integration.",
	"github.com/mcpflow/mcpflow/api/client.",
}

// countWakes reads the execution trace in r and counts the goroutines
// made runnable from not existing or waiting, but for those whose entry
// function is in notMcpflow; byStart counts them by entry function. A
// goroutine's entry is the bottom frame of any stack of its own in the
// trace (one parked since before the trace shows it when it parks again).
func countWakes(r io.Reader) (n int, byStart map[string]int, err error) {
	tr, err := xtrace.NewReader(r)
	if err != nil {
		return 0, nil, fmt.Errorf("read the trace: %w", err)
	}
	type wake struct {
		g     xtrace.GoID
		waker string
	}
	var wakes []wake
	entry := map[xtrace.GoID]string{}
	for {
		ev, err := tr.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, nil, fmt.Errorf("read the trace: %w", err)
		}
		if ev.Kind() != xtrace.EventStateTransition {
			continue
		}
		st := ev.StateTransition()
		if st.Resource.Kind != xtrace.ResourceGoroutine {
			continue
		}
		g := st.Resource.Goroutine()
		if f := bottomFrame(st.Stack); f != "" {
			entry[g] = f
		}
		if from, to := st.Goroutine(); to == xtrace.GoRunnable && (from == xtrace.GoNotExist || from == xtrace.GoWaiting) {
			wakes = append(wakes, wake{g: g, waker: wakerOf(ev.Stack())})
		}
	}
	byStart = map[string]int{}
	for _, w := range wakes {
		start := entry[w.g]
		if slices.ContainsFunc(notMcpflow, func(prefix string) bool { return strings.HasPrefix(start, prefix) }) {
			continue
		}
		switch {
		case start == "":
			start = "(entry unknown) woken by " + w.waker
		case strings.HasPrefix(start, hollywood):
			start = "an actor's inbox, woken by " + w.waker // each hop of an actor message
		}
		n++
		byStart[start]++
	}
	return n, byStart, nil
}

// bottomFrame is the function a stack starts in: its goroutine's entry.
func bottomFrame(s xtrace.Stack) string {
	var last string
	for f := range s.Frames() {
		last = f.Func
	}
	return last
}

// hollywood is the package path of the actor library, whose inbox
// goroutines carry every actor message.
const hollywood = "github.com/anthdm/hollywood/"

// wakerOf is the innermost function of stack s outside the runtime, the
// standard library's sync and the actor library: who made a goroutine
// runnable.
func wakerOf(s xtrace.Stack) string {
	for f := range s.Frames() {
		if !slices.ContainsFunc([]string{"runtime.", "sync.", "internal/", hollywood}, func(p string) bool { return strings.HasPrefix(f.Func, p) }) {
			return f.Func
		}
	}
	return "(no stack)"
}

// formatLegs lists counts by entry function, most first.
func formatLegs(byStart map[string]int) string {
	keys := slices.SortedFunc(maps.Keys(byStart), func(a, b string) int {
		if byStart[a] != byStart[b] {
			return byStart[b] - byStart[a]
		}
		return strings.Compare(a, b)
	})
	var sb strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&sb, "\t%2d  %s\n", byStart[k], k)
	}
	return sb.String()
}
