package supervisor

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/session"
)

// linePatience bounds the waits only a broken door would reach.
const linePatience = 5 * time.Second

// counted is an actor that counts the calls it receives.
type counted struct {
	got *atomic.Int64
}

func (c counted) Receive(ctx *actor.Context) {
	if _, ok := ctx.Message().(string); ok {
		c.got.Add(1)
	}
}

// stopped waits, within linePatience, for the actor whose stop ctx
// reports to have stopped.
func stopped(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(linePatience):
		t.Fatal("the actor did not stop")
	}
}

// countingActor spawns, on an engine of its own, an actor that stands
// for a session actor: it counts the calls it receives in got.
func countingActor(t *testing.T) (e *actor.Engine, pid *actor.PID, got *atomic.Int64) {
	t.Helper()
	e, err := actor.NewEngine(actor.NewEngineConfig())
	is.New(t).NoErr(err) // new engine
	got = &atomic.Int64{}
	return e, e.Spawn(func() actor.Receiver { return counted{got: got} }, "session", actor.WithID("a")), got
}

func TestALineTakesCallsUntilItsDoorIsBarredOrClosed(t *testing.T) {
	is := is.New(t)
	e, pid, got := countingActor(t)
	l := NewLines()

	is.True(!l.send(e, "fake.one", "call")) // no door before the actor is spawned
	l.open("fake.one", pid, nil)
	is.True(l.send(e, "fake.one", "call"))  // an open door takes the call
	is.True(!l.send(e, "fake.two", "call")) // another connection has no door

	l.bar("fake.one", actor.NewPID(e.Address(), "session/b"))
	is.True(l.send(e, "fake.one", "call")) // barring another actor's door changes nothing
	l.bar("fake.one", pid)
	is.True(!l.send(e, "fake.one", "call")) // a panicked actor's door is barred

	stopped(t, l.close("fake.one", pid, func() context.Context { return e.Poison(pid) }))
	is.Equal(got.Load(), int64(2))          // the two calls the door took reached the actor
	is.True(!l.send(e, "fake.one", "call")) // no door once closed

	var nilLines *Lines
	is.True(!nilLines.send(e, "fake.one", "call")) // nil lines take nothing
}

// endedTenure is a tenure its node's clock says has ended.
type endedTenure struct{ session.Tenure }

func (endedTenure) Valid() bool { return false }

func TestALineRefusesACallOnceItsTenureHasEnded(t *testing.T) {
	is := is.New(t)
	e, pid, got := countingActor(t)
	l := NewLines()
	l.open("fake.one", pid, endedTenure{})
	is.True(!l.send(e, "fake.one", "call")) // the supervisor places the connection again
	d := (*l.doors.Load())["fake.one"]
	is.Equal(d.state.Load(), int64(0)) // the refused caller left
	stopped(t, e.Poison(pid))
	is.Equal(got.Load(), int64(0)) // and its call never reached the actor
}

func TestAClosedDoorPoisonsOnlyOnceItsLastCallerHasLeft(t *testing.T) {
	is := is.New(t)
	d := &door{}
	var poisons atomic.Int64
	poison := func() context.Context {
		poisons.Add(1)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	}
	is.True(d.enter()) // two callers inside
	is.True(d.enter())
	done := d.close(poison)
	is.True(!d.enter())                // nobody enters a closed door
	is.Equal(poisons.Load(), int64(0)) // not while callers are inside
	d.leave()
	is.Equal(poisons.Load(), int64(0))
	d.leave()
	is.Equal(poisons.Load(), int64(1)) // the last one out poisons
	stopped(t, done)
}

// TestNoCallPassesADoorAfterItsActorIsPoisoned races callers against the
// close: every call a door takes is sent before the actor's pill, and
// the pill is enqueued exactly once.
func TestNoCallPassesADoorAfterItsActorIsPoisoned(t *testing.T) {
	is := is.New(t)
	callers := runtime.GOMAXPROCS(0) // more would wait for a processor, not race
	for range 100 {
		d := &door{}
		var poisoned atomic.Bool
		var poisons, late atomic.Int64
		var wg, in sync.WaitGroup
		in.Add(callers)
		for range callers {
			wg.Go(func() {
				first := true
				for d.enter() {
					if poisoned.Load() {
						late.Add(1)
					}
					d.leave()
					if first {
						in.Done() // the door is closed only once every caller is at it
						first = false
					}
				}
			})
		}
		in.Wait()
		d.close(func() context.Context {
			poisoned.Store(true)
			poisons.Add(1)
			return context.Background()
		})
		wg.Wait()
		is.Equal(poisons.Load(), int64(1)) // poisoned once
		is.Equal(late.Load(), int64(0))    // no caller was inside after the poison
	}
}
