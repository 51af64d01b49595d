package schedules_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/actors/schedules"
	"github.com/mcpflow/mcpflow/actors/store"
)

// fakeRuns is a run manager whose runs run until the test ends them.
type fakeRuns struct {
	mu        sync.Mutex
	starts    []runs.StartRequest
	status    map[string]string
	byKey     map[string]string
	cancelled []string
	deduped   int
	started   func() // called after each new run starts, if set
}

func newFakeRuns() *fakeRuns {
	return &fakeRuns{status: map[string]string{}, byKey: map[string]string{}}
}

func (f *fakeRuns) Start(_ context.Context, req runs.StartRequest) (runs.StartResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id, ok := f.byKey[req.IdempotencyKey]; ok {
		f.deduped++
		return runs.StartResult{Run: store.Run{ID: id, Status: f.status[id]}, Deduplicated: true}, nil
	}
	id := fmt.Sprintf("run-%d", len(f.starts)+1)
	f.starts = append(f.starts, req)
	f.status[id], f.byKey[req.IdempotencyKey] = store.RunRunning, id
	if f.started != nil {
		defer f.started()
	}
	return runs.StartResult{Run: store.Run{ID: id, Status: store.RunRunning}}, nil
}

func (f *fakeRuns) Cancel(_ context.Context, id, _ string) (store.Run, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cancelled = append(f.cancelled, id)
	f.status[id] = store.RunCancelled
	return store.Run{ID: id, Status: store.RunCancelled}, nil
}

func (f *fakeRuns) Status(_ context.Context, id string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.status[id], nil
}

// end completes every running run.
func (f *fakeRuns) end() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, st := range f.status {
		if st == store.RunRunning {
			f.status[id] = store.RunCompleted
		}
	}
}

// keys are the idempotency keys of the runs started, in order.
func (f *fakeRuns) keys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []string{}
	for _, r := range f.starts {
		out = append(out, r.IdempotencyKey)
	}
	return out
}

// every60 is a schedule of a run a minute, active since since.
func every60(overlap string, since time.Time, window int) store.Schedule {
	return store.Schedule{ScheduleDef: store.ScheduleDef{ID: "s1", DeploymentID: "dep", Spec: store.ScheduleSpec{IntervalSeconds: 60},
		Overlap: overlap, CatchupWindowSeconds: window, CreatedAtMs: since.UnixMilli(), ActiveSinceMs: since.UnixMilli()}}
}

// run starts a scheduler over sc, active from the bubble's start, in a synctest bubble and hands it to
// test, then stops it.
func run(t *testing.T, sc store.Schedule, test func(is *is.I, st store.Store, f *fakeRuns, s *schedules.Scheduler)) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		st := store.NewMemory()
		sc.CreatedAtMs, sc.ActiveSinceMs = time.Now().UnixMilli(), time.Now().UnixMilli() // the bubble's now
		is.NoErr(st.CreateSchedule(t.Context(), sc))
		f := newFakeRuns()
		s := start(t, st, f)
		test(is, st, f, s)
	})
}

// start starts a scheduler in the bubble, stopped at the test's end, and
// lets it settle.
func start(t *testing.T, st store.Store, f *fakeRuns) *schedules.Scheduler {
	return startLed(t, st, f, nil)
}

// startLed starts, as start, a scheduler that fires while l leads.
func startLed(t *testing.T, st store.Store, f *fakeRuns, l schedules.Leader) *schedules.Scheduler {
	s := schedules.Start(schedules.Options{Store: st, Runs: f, Leader: l})
	t.Cleanup(func() { is.New(t).NoErr(s.Stop(context.Background())) })
	synctest.Wait()
	return s
}

// state reads the schedule's state.
func state(is *is.I, st store.Store) store.ScheduleState {
	sc, err := st.GetSchedule(context.Background(), "s1")
	is.NoErr(err)
	return sc.State
}

// after lets d pass (in the bubble's time) and the scheduler settle.
func after(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

func key(t0 time.Time, minutes int) string {
	return schedules.TickKey("s1", t0.Add(time.Duration(minutes)*time.Minute))
}

func TestOverlapSkipDropsTheTicksOfARunningRun(t *testing.T) {
	run(t, every60(schedules.OverlapSkip, time.Time{}, 60), func(is *is.I, st store.Store, f *fakeRuns, _ *schedules.Scheduler) {
		t0 := time.Now()
		after(3*time.Minute + time.Second) // ticks at 1, 2 and 3 minutes
		is.Equal(f.keys(), []string{key(t0, 1)})
		s := state(is, st)
		is.Equal(s.Skipped, int64(2))
		is.Equal(s.Fired, int64(1))
		is.Equal(s.LastRunID, "run-1")
		f.end()
		after(time.Minute) // the tick at 4 minutes finds no run running
		is.Equal(f.keys(), []string{key(t0, 1), key(t0, 4)})
		is.Equal(f.starts[1].StartedBy, "schedule:s1")
	})
}

func TestOverlapBufferOneHoldsOneTickUntilTheRunEnds(t *testing.T) {
	run(t, every60(schedules.OverlapBufferOne, time.Time{}, 60), func(is *is.I, st store.Store, f *fakeRuns, _ *schedules.Scheduler) {
		t0 := time.Now()
		after(3*time.Minute + time.Second)
		is.Equal(f.keys(), []string{key(t0, 1)})
		s := state(is, st)
		is.Equal(s.BufferedTickMs, t0.Add(2*time.Minute).UnixMilli()) // the first tick held
		is.Equal(s.Skipped, int64(1))                                 // the second dropped
		f.end()
		after(schedules.BufferPoll) // the buffered tick starts once the run has ended
		is.Equal(f.keys(), []string{key(t0, 1), key(t0, 2)})
		is.Equal(state(is, st).BufferedTickMs, int64(0))
	})
}

func TestOverlapAllowAllStartsEveryTick(t *testing.T) {
	run(t, every60(schedules.OverlapAllowAll, time.Time{}, 60), func(is *is.I, st store.Store, f *fakeRuns, _ *schedules.Scheduler) {
		t0 := time.Now()
		after(3*time.Minute + time.Second)
		is.Equal(f.keys(), []string{key(t0, 1), key(t0, 2), key(t0, 3)})
		is.Equal(len(f.cancelled), 0)
		is.Equal(state(is, st).Skipped, int64(0))
	})
}

func TestOverlapCancelOtherCancelsTheRunningRun(t *testing.T) {
	run(t, every60(schedules.OverlapCancelOther, time.Time{}, 60), func(is *is.I, st store.Store, f *fakeRuns, _ *schedules.Scheduler) {
		t0 := time.Now()
		after(3*time.Minute + time.Second)
		is.Equal(f.keys(), []string{key(t0, 1), key(t0, 2), key(t0, 3)})
		is.Equal(f.cancelled, []string{"run-1", "run-2"})
		s := state(is, st)
		is.Equal(s.LastRunID, "run-3")
		is.Equal(s.LastOutcome, store.RunRunning)
	})
}

// After an hour down, a minute schedule with a 10-minute catch-up window
// fires the ten late ticks within the window and the one due now, once
// each and in order, and counts the 49 before the window as skipped.
func TestCatchUpAfterAnHourDownFiresTheWindowOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		t0 := time.Now() // the scheduler starts an hour after the schedule was last seen
		st := store.NewMemory()
		is.NoErr(st.CreateSchedule(t.Context(), every60(schedules.OverlapAllowAll, t0.Add(-time.Hour), 600)))
		f := newFakeRuns()
		start(t, st, f)
		want := []string{}
		for m := -10; m <= 0; m++ {
			want = append(want, key(t0, m))
		}
		is.Equal(f.keys(), want)
		sc := state(is, st)
		is.Equal(sc.Missed, int64(59))  // every tick but the one due now was late
		is.Equal(sc.Skipped, int64(49)) // the late ones before the window
		is.Equal(sc.Fired, int64(11))
		is.Equal(sc.LastTickMs, t0.UnixMilli())
		after(time.Minute) // and it goes on on time
		is.Equal(len(f.keys()), 12)
		is.Equal(state(is, st).Missed, int64(59))
	})
}

func TestPausedSchedulesDoNotFireAndTriggerFiresNow(t *testing.T) {
	sc := every60(schedules.OverlapAllowAll, time.Time{}, 60)
	sc.Paused = true
	run(t, sc, func(is *is.I, st store.Store, f *fakeRuns, s *schedules.Scheduler) {
		after(3 * time.Minute)
		is.Equal(len(f.keys()), 0)
		got, err := s.Trigger(context.Background(), "s1")
		is.NoErr(err)
		is.Equal(got.State.LastRunID, "run-1")
		is.Equal(f.starts[0].StartedBy, "schedule:s1")
	})
}

// A catch-up of more ticks than one plan fires (MaxDue) goes on at once
// in the next plans: every tick of the window is fired, once, in order.
func TestALongCatchUpIsFiredInBoundedPlans(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		t0 := time.Now()
		st := store.NewMemory()
		sc := every60(schedules.OverlapAllowAll, t0.Add(-5*time.Hour), 3*3600)
		is.NoErr(st.CreateSchedule(t.Context(), sc))
		f := newFakeRuns()
		start(t, st, f)
		keys := f.keys()
		is.Equal(len(keys), 181) // three hours of minutes, and now
		is.Equal(keys[0], key(t0, -180))
		is.Equal(keys[180], key(t0, 0))
		s := state(is, st)
		is.Equal(s.Skipped, int64(119)) // the two hours before the window
		is.Equal(s.Fired, int64(181))
	})
}

// baton is a lease the test hands out: the node it names leads; a node
// takes it when it names no one.
type baton struct {
	mu     sync.Mutex
	holder string
}

func (b *baton) set(holder string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.holder = holder
}

// leader is node's part in the race for b.
type leader struct {
	b    *baton
	node string
}

func (l leader) Lead(context.Context) bool {
	l.b.mu.Lock()
	defer l.b.mu.Unlock()
	if l.b.holder == "" {
		l.b.holder = l.node
	}
	return l.b.holder == l.node
}

func (l leader) Leads() bool {
	l.b.mu.Lock()
	defer l.b.mu.Unlock()
	return l.b.holder == l.node
}

func (leader) Interval() time.Duration { return time.Second }

// Two nodes share one store and one run manager. The leader dies right
// after it started a tick's run, before it recorded the fire; its lease
// runs out ten seconds later and the other node takes over. Every tick
// of a one-second schedule is fired once: the late ones within the
// catch-up window, and the one the dead leader had fired again under its
// key, which starts no second run.
func TestATickIsFiredOnceAcrossALeaderThatDiesMidFire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		t0 := time.Now()
		st := store.NewMemory()
		sc := store.Schedule{ScheduleDef: store.ScheduleDef{ID: "s1", DeploymentID: "dep", Spec: store.ScheduleSpec{IntervalSeconds: 1},
			Overlap: schedules.OverlapAllowAll, CatchupWindowSeconds: 60, CreatedAtMs: t0.UnixMilli(), ActiveSinceMs: t0.UnixMilli()}}
		is.NoErr(st.CreateSchedule(t.Context(), sc))
		f := newFakeRuns()
		b := &baton{}
		a := startLed(t, st, f, leader{b, "a"}) // leads: first to ask
		startLed(t, st, f, leader{b, "b"})
		after(10 * time.Second)
		is.Equal(len(f.keys()), 10)
		is.Equal(state(is, st).Fired, int64(10))

		f.mu.Lock()
		f.started = func() { // a dies in its next fire, after the start
			f.started = nil
			b.set("a, dead")
		}
		f.mu.Unlock()
		after(time.Second)
		is.NoErr(a.Stop(context.Background()))
		is.Equal(len(f.keys()), 11)
		is.Equal(state(is, st).Fired, int64(10)) // a did not record its last fire

		after(10 * time.Second) // a's lease runs out at 21 s
		b.set("")
		after(4 * time.Second) // b takes it at 22 s, its next try, and catches up
		keys := f.keys()
		is.Equal(len(keys), 25)
		for i, k := range keys {
			is.Equal(k, schedules.TickKey("s1", t0.Add(time.Duration(i+1)*time.Second))) // every tick, once, in order
		}
		is.Equal(f.deduped, 1) // the tick a fired, fired again by b
		s := state(is, st)
		is.Equal(s.Fired, int64(25))
		is.Equal(s.Missed, int64(6)) // ticks 11 to 16, fired at 22 s: more than Late after their time
		is.Equal(s.Skipped, int64(0))
	})
}
