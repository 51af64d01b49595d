package audit_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/fakes"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// patience bounds every wait that only a broken appender would reach.
const patience = 10 * time.Second

func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	t.Cleanup(cancel)
	return ctx
}

// started closes an appender at the end of the test, which must find its
// queue drained.
func started(t *testing.T, st store.Events, opts audit.AppenderOptions) *audit.Appender {
	a := audit.StartAppender(st, opts)
	t.Cleanup(func() {
		if err := a.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return a
}

// kinds are the kinds of the events in the log, in order.
func kinds(t *testing.T, st store.Events) []string {
	t.Helper()
	evs, err := st.ListEvents(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, e := range evs {
		out = append(out, e.Kind)
	}
	return out
}

// drops counts an appender's drops by reason.
type drops struct {
	mu sync.Mutex
	n  map[string]int
}

func (d *drops) count(reason string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.n == nil {
		d.n = map[string]int{}
	}
	d.n[reason]++
}

func (d *drops) of(reason string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n[reason]
}

// Record returns while its event waits for the store, and the event is
// in the log once the store takes it.
func TestRecordReturnsBeforeTheAppendAndTheEventStillArrives(t *testing.T) {
	is := is.New(t)
	ctx := bounded(t)
	mem := store.NewMemory()
	held := fakes.NewHeldEvents(mem)
	a := started(t, held, audit.AppenderOptions{})

	a.Record(time.UnixMilli(42), audit.Event{Kind: audit.ToolCallStarted, ConnectionID: "fake.one", Payload: map[string]any{"tool": "echo"}})
	e, through, err := held.Held(ctx)
	is.NoErr(err)                           // the append reached the store after Record returned
	is.Equal(e.Kind, audit.ToolCallStarted) // the event recorded
	is.Equal(kinds(t, mem), []string{})     // not in the log while the store holds it
	through()
	is.NoErr(a.Close(ctx))                                   // the queue drains
	is.Equal(kinds(t, mem), []string{audit.ToolCallStarted}) // then it is
	evs, err := mem.ListEvents(ctx, 0, 0)
	is.NoErr(err)
	is.Equal(evs[0].TimestampEpochMs, int64(42)) // stamped when recorded
	is.Equal(*evs[0].ConnectionID, "fake.one")
	is.Equal(evs[0].Payload["tool"], "echo")
}

// The start of a span is held until its end is recorded, then appended
// before it, however many workers append: a call's start comes before its
// end, and both are appended once the call is over. A start whose end does
// not come within HoldStart is appended alone.
func TestASpansStartIsAppendedWithItsEndAndBeforeIt(t *testing.T) {
	is := is.New(t)
	ctx := bounded(t)
	mem := store.NewMemory()
	held := fakes.NewHeldEvents(mem)
	a := started(t, held, audit.AppenderOptions{Workers: 4, HoldStart: patience})
	const calls = 20
	for i := range calls {
		startKind, endKind, other := fmt.Sprintf("started_%d", i), fmt.Sprintf("completed_%d", i), fmt.Sprintf("other_%d", i)
		span := a.Begin(time.Now(), audit.Event{Kind: startKind})
		a.Record(time.Now(), audit.Event{Kind: other})
		e, through, err := held.Held(ctx)
		is.NoErr(err)
		is.Equal(e.Kind, other) // the start waits for its end
		through()
		span.End(time.Now(), audit.Event{Kind: endKind})
		for _, kind := range []string{startKind, endKind} {
			e, through, err := held.Held(ctx)
			is.NoErr(err)          // an append reaches the store
			is.Equal(e.Kind, kind) // the start first, the end once the start was appended
			through()
		}
	}
	is.NoErr(a.Close(ctx))
	logged := kinds(t, mem)
	is.Equal(len(logged), 3*calls) // every event is in the log
	for i := range calls {         // each start before its end
		is.True(slices.Index(logged, fmt.Sprintf("started_%d", i)) < slices.Index(logged, fmt.Sprintf("completed_%d", i)))
	}

	long := started(t, mem, audit.AppenderOptions{HoldStart: time.Millisecond})
	span := long.Begin(time.Now(), audit.Event{Kind: "long_started"})
	poll.For(t, "the start of a long span appended alone", patience, func() bool {
		return slices.Contains(kinds(t, mem), "long_started")
	})
	span.End(time.Now(), audit.Event{Kind: "long_completed"})
	is.NoErr(long.Close(ctx))
	is.Equal(kinds(t, mem)[3*calls:], []string{"long_started", "long_completed"})
}

// Close waits for the events queued to be appended; a Record after Close
// appends on its caller's path.
func TestCloseDrainsTheQueue(t *testing.T) {
	is := is.New(t)
	ctx := bounded(t)
	mem := store.NewMemory()
	held := fakes.NewHeldEvents(mem)
	a := audit.StartAppender(held, audit.AppenderOptions{Workers: 1})
	for i := range 10 {
		a.Record(time.Now(), audit.Event{Kind: fmt.Sprintf("event_%d", i)})
	}
	_, through, err := held.Held(ctx) // the worker has the first; nine are queued
	is.NoErr(err)
	closed := make(chan error, 1)
	go func() { closed <- a.Close(ctx) }()
	through()
	held.Open()
	is.NoErr(<-closed)               // Close returned once the queue was drained
	is.Equal(len(kinds(t, mem)), 10) // every event queued before it is in the log

	a.Record(time.Now(), audit.Event{Kind: "late"})
	is.Equal(len(kinds(t, mem)), 11) // appended before Record returned
}

// A full queue makes Record wait up to FullWait for room, then drop its
// event, counted; a Close whose context ends first cuts the appends in
// progress short and drops what is queued, counted.
func TestWhatIsDroppedIsCounted(t *testing.T) {
	is := is.New(t)
	ctx := bounded(t)
	mem := store.NewMemory()
	held := fakes.NewHeldEvents(mem)
	var dropped drops
	a := audit.StartAppender(held, audit.AppenderOptions{Workers: 1, Queue: 1, FullWait: time.Millisecond, Dropped: dropped.count})
	a.Record(time.Now(), audit.Event{Kind: "taken"})
	_, _, err := held.Held(ctx) // the worker waits on the store
	is.NoErr(err)
	a.Record(time.Now(), audit.Event{Kind: "queued"})
	a.Record(time.Now(), audit.Event{Kind: "no_room"})
	is.Equal(dropped.of(audit.DropQueueFull), 1) // the queue had no room left

	gone, cancel := context.WithCancel(ctx)
	cancel()
	is.True(a.Close(gone) != nil)               // the queue was not drained
	is.Equal(dropped.of(audit.DropShutdown), 1) // the queued event
	is.Equal(kinds(t, mem), []string{})         // the held one was cut short
}
