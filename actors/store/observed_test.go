package store_test

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/metrics/metricstest"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// told records what an Observer is told, in order.
type told struct {
	mu    sync.Mutex
	calls []string
}

func (o *told) add(c string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, c)
}

func (o *told) WakeRun(id string, seq int64) { o.add("run " + id + " " + itoa(seq)) }
func (o *told) WakeAdmin(seq int64)          { o.add("admin " + itoa(seq)) }
func (o *told) WakeAll()                     { o.add("all") }

// take returns what o was told since the last take.
func (o *told) take() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := o.calls
	o.calls = nil
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestAnObservedStoreTellsItsObserverOfEveryCommitToTheEventLogs(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	o := &told{}
	m := metrics.New()
	st := store.Observed(store.NewMemory(), o, m)

	r := store.Run{ID: "run-1", Status: store.RunRunning, UpdatedAt: time.Now().UTC()}
	is.NoErr(st.CreateRun(ctx, r, nil))
	is.Equal(o.take(), []string{"run run-1 0", "admin 0"}) // a run's commit may append admin events
	r.TraceCount++
	entry := workflow.TraceEntry{FrameID: "root", NodeID: "a", StepType: "node", Outcome: "ok"}
	is.NoErr(st.RecordProgress(ctx, r, []workflow.TraceEntry{entry}))
	is.Equal(o.take(), []string{"run run-1 0", "admin 0"})

	seq, err := st.AppendEvent(ctx, store.Event{Kind: "connection_registered", TimestampEpochMs: 1})
	is.NoErr(err)
	is.Equal(o.take(), []string{"admin " + itoa(seq)}) // with the sequence number appended

	recovered, err := st.RecoverRunning(ctx, time.Now())
	is.NoErr(err)
	is.Equal(len(recovered), 1)
	is.Equal(o.take(), []string{"run run-1 0", "admin 0"}) // each run recovery changed

	// Failed writes tell nothing; reads are the store's own.
	is.True(st.CreateRun(ctx, r, nil) != nil) // the id is taken
	r.TraceCount = 9
	is.True(st.RecordProgress(ctx, r, nil) != nil) // the trace count is wrong
	_, err = st.GetRun(ctx, "run-1")
	is.NoErr(err)
	is.Equal(o.take(), []string(nil))

	f := metricstest.Gather(t, m.Registry())
	for op, want := range map[string]float64{"create_run": 2, "record_progress": 2, "append_event": 1} {
		n, _ := f.Value("mcpflow_store_commit_duration_seconds", "operation", op)
		is.Equal(n, want) // every write is timed, failed ones too
	}
}
