package run_test

import (
	"encoding/json"
	"runtime"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/metrics/metricstest"
	"github.com/mcpflow/mcpflow/actors/run"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/fakes"
)

// reportingWorld is a world whose upstream has the report tools, its
// clients taken to have set the log level to debug.
func reportingWorld(t *testing.T) *world {
	return newWorldServing(t, func() *mcp.Server { return fakes.WithReports(fakes.NewServer()) })
}

// runEvents reads every event of run id.
func runEvents(t *testing.T, st store.Store, id string) []store.RunEvent {
	is := is.New(t)
	is.Helper()
	events, _, err := st.ReadRunEvents(wait(t), id, 0, 0)
	is.NoErr(err)
	return events
}

// The report tool answers right after its last report: the session
// hands a call's reports over before its answer (see
// actors/session/reports_order_test.go).

func TestAStepsProgressAndLogsAreRunEventsStoredBeforeItsStepFinished(t *testing.T) {
	is := is.New(t)
	w := reportingWorld(t)
	_, final := w.start(t, "run-reports", w.plan(t, "report"), workflow.Object{"progress": 3.0, "logs": 2.0, "level": "notice"})
	is.Equal(final.Status, store.RunCompleted)

	var progress []store.RunEvent
	logs, finished := 0, -1
	for i, e := range runEvents(t, w.store, "run-reports") {
		switch e.Kind {
		case store.RunEventStepProgress:
			is.Equal(finished, -1) // before the step's step_finished
			is.Equal(e.Step.NodeID, workflow.CallStep)
			is.True(e.Step.CallID != "")
			progress = append(progress, e)
		case store.RunEventStepLog:
			is.Equal(finished, -1)
			is.Equal(e.Log.Level, "notice")
			is.Equal(e.Log.Logger, "fake")
			logs++
		case store.RunEventStepFinished:
			finished = i
		}
	}
	is.True(len(progress) >= 1) // coalesced, at most one per interval
	three := 3.0
	is.Equal(*progress[len(progress)-1].Progress, store.RunEventProgress{Progress: 3, Total: &three, Message: "step 3"}) // the last one is stored
	is.Equal(logs, 2)
}

func TestAStepsLogsPastTheCapAreDroppedAndCounted(t *testing.T) {
	is := is.New(t)
	w := reportingWorld(t)
	_, final := w.start(t, "run-chatty", w.plan(t, "report"), workflow.Object{"logs": float64(run.DefaultStepLogs + 50)})
	is.Equal(final.Status, store.RunCompleted)
	logs, dropped := 0, 0
	for _, e := range runEvents(t, w.store, "run-chatty") {
		if e.Kind == store.RunEventStepLog {
			logs++
			dropped += e.Log.Dropped
		}
	}
	is.Equal(logs, run.DefaultStepLogs+1) // the cap, and the one that counts the rest
	is.Equal(dropped, 50)
	n, _ := metricstest.Gather(t, w.metrics.Registry()).Value("mcpflow_run_live_events_total", "kind", "step_log", "fate", "dropped")
	is.Equal(n, 50.0)
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func TestAFloodOfNotificationsDuringOneCallGrowsNeitherTheStoreNorTheHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("a flood of 200,000 notifications")
	}
	is := is.New(t)
	w := reportingWorld(t)
	plan := w.plan(t, "report")
	w.start(t, "run-warm", plan, workflow.Object{"progress": 10.0, "logs": 10.0}) // the session is open, the code paths warm
	before := heapInUse()
	w.callTimeout = 5 * time.Minute // go-sdk decodes each notification: some 30 s on an idle 2-core machine

	began := time.Now()
	_, final := w.start(t, "run-flood", plan, workflow.Object{"progress": 100_000.0, "logs": 100_000.0})
	took := time.Since(began)
	is.Equal(final.Status, store.RunCompleted)
	after := heapInUse()

	events := runEvents(t, w.store, "run-flood")
	kinds := map[string]int{}
	size := 0
	for _, e := range events {
		kinds[e.Kind]++
		text, err := json.Marshal(e)
		is.NoErr(err)
		size += len(text)
	}
	t.Logf("200,000 notifications in %s: %d events stored (%v), %d bytes; heap %d → %d bytes", took, len(events), kinds, size, before, after)
	// What is stored grows with the call's duration (one progress per
	// interval), never with the count of notifications.
	progress := int(took/run.DefaultProgressInterval) + 2
	is.True(kinds[store.RunEventStepProgress] <= progress)         // one per interval, and the last
	is.True(kinds[store.RunEventStepLog] <= run.DefaultStepLogs+1) // the cap, and the count of the rest
	is.True(size <= (progress+run.DefaultStepLogs+5)*512)          // a few hundred bytes an event, however many notifications came
	is.True(after < before+16<<20)                                 // the heap is back where it was, within 16 MiB
}
