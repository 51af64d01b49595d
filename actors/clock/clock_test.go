package clock_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/clock"
)

// A manual clock fires what falls due when it is advanced, in time order,
// and never what was stopped.
func TestAManualClockFiresDueTimersInOrderWhenAdvanced(t *testing.T) {
	is := is.New(t)
	start := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	c := clock.NewManual(start)
	var fired []string
	c.AfterFunc(2*time.Second, func() { fired = append(fired, "2s") })
	c.AfterFunc(time.Second, func() { fired = append(fired, "1s") })
	stopped := c.AfterFunc(time.Second, func() { fired = append(fired, "stopped") })
	is.True(stopped.Stop())  // a pending timer stops
	is.True(!stopped.Stop()) // once

	is.Equal(c.Advance(500*time.Millisecond), 0) // nothing due yet
	is.Equal(c.Pending(), []time.Duration{500 * time.Millisecond, 1500 * time.Millisecond})
	is.Equal(c.Advance(2*time.Second), 2)
	is.Equal(fired, []string{"1s", "2s"}) // in time order
	is.Equal(c.Now(), start.Add(2500*time.Millisecond))
}

// WaitFor returns once a timer another goroutine arms is pending.
func TestWaitForSeesATimerArmedMeanwhile(t *testing.T) {
	is := is.New(t)
	c := clock.NewManual(time.Now())
	go c.AfterFunc(time.Minute, func() {})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	is.True(c.WaitFor(ctx, func(pending []time.Duration) bool { return len(pending) == 1 }))
}

// The system clock runs a function after its delay.
// It runs in a synctest bubble, whose clock the system clock reads: the
// call comes at its delay exactly, neither before nor after.
func TestTheSystemClockCallsAfterTheDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		done := make(chan time.Time, 1)
		c := clock.System()
		start := c.Now()
		c.AfterFunc(10*time.Millisecond, func() { done <- time.Now() })
		synctest.Wait()
		is.Equal(len(done), 0) // not before its delay
		at := <-done
		is.Equal(at.Sub(start), 10*time.Millisecond) // at its delay
	})
}
