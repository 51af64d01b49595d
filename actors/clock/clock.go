// Package clock owns the time sources the runtime schedules on: the
// machine's clock, and a manual clock that tests and simulations move by
// hand. It knows nothing of what is scheduled.
package clock

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Clock is a time source to schedule on: what a session actor's timers
// and a lease keeper's renewals run on. Production uses System; tests
// drive a Manual clock.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc.
type Timer interface {
	// Stop prevents the call if it has not happened yet, and reports
	// whether it did.
	Stop() bool
}

// System is the machine's clock, whose monotonic reading measures the
// durations.
func System() Clock { return systemClock{} }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Manual is a Clock that moves only when told to: Advance fires, in
// time order, every timer that falls due. It is for tests and
// simulations; it is safe for concurrent use.
type Manual struct {
	mu      sync.Mutex
	now     time.Time
	timers  []*manualTimer
	seq     int
	changed chan struct{} // closed and replaced whenever a timer is added
}

// NewManual returns a clock that reads start until advanced.
func NewManual(start time.Time) *Manual {
	return &Manual{now: start, changed: make(chan struct{})}
}

type manualTimer struct {
	c    *Manual
	at   time.Time
	seq  int
	f    func()
	done bool
}

// Now implements Clock.
func (c *Manual) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc implements Clock. A timer due now or earlier fires at the
// next Advance (Advance(0) included), never inside AfterFunc.
func (c *Manual) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &manualTimer{c: c, at: c.now.Add(d), seq: c.seq, f: f}
	c.timers = append(c.timers, t)
	close(c.changed)
	c.changed = make(chan struct{})
	return t
}

// Stop implements Timer.
func (t *manualTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	if t.done {
		return false
	}
	t.done = true
	return true
}

// Advance moves the clock d forward and calls, in due order and on the
// caller's goroutine, the function of every timer that is due (timer
// functions must not block: a session actor's only send a message). It
// returns how many fired.
func (c *Manual) Advance(d time.Duration) int {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*manualTimer
	kept := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.done:
		case !t.at.After(c.now):
			t.done = true
			due = append(due, t)
		default:
			kept = append(kept, t)
		}
	}
	clear(c.timers[len(kept):])
	c.timers = kept
	c.mu.Unlock()
	sort.Slice(due, func(i, j int) bool {
		if !due[i].at.Equal(due[j].at) {
			return due[i].at.Before(due[j].at)
		}
		return due[i].seq < due[j].seq
	})
	for _, t := range due {
		t.f()
	}
	return len(due)
}

// Pending returns the delays, from now, of the timers still pending,
// soonest first.
func (c *Manual) Pending() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []time.Duration
	for _, t := range c.timers {
		if !t.done {
			out = append(out, t.at.Sub(c.now))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// WaitFor blocks until ok accepts the pending delays or ctx ends; it
// reports whether ok accepted them. Tests use it to know that an actor
// has armed a timer before they advance the clock past it.
func (c *Manual) WaitFor(ctx context.Context, ok func(pending []time.Duration) bool) bool {
	for {
		c.mu.Lock()
		changed := c.changed
		c.mu.Unlock()
		if ok(c.Pending()) {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}
