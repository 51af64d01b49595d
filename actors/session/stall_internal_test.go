package session

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"
)

// meter is a StallMeter the test sets.
type meter struct{ stalled atomic.Int64 }

func (m *meter) Stalled() time.Duration { return time.Duration(m.stalled.Load()) }
func (m *meter) starve(d time.Duration) { m.stalled.Add(int64(d)) }

// deadlineAt starts a 1 s stall deadline on a manual clock and returns it,
// the clock and how many times it expired so far.
func deadlineAt(m StallMeter) (*stallDeadline, *ManualClock, *atomic.Int32) {
	clock := NewManualClock(time.Now())
	var expired atomic.Int32
	d := startStallDeadline(clock, time.Second, m, func() { expired.Add(1) })
	return d, clock, &expired
}

func TestAStallDeadlineExpiresAtItsTimeoutWhenTheProcessRan(t *testing.T) {
	is := is.New(t)
	d, clock, expired := deadlineAt(&meter{})
	clock.Advance(999 * time.Millisecond)
	is.Equal(expired.Load(), int32(0))
	clock.Advance(time.Millisecond)
	is.Equal(expired.Load(), int32(1))
	gone, granted := d.stop()
	is.True(gone)
	is.Equal(granted, time.Duration(0))
}

func TestAStallDeadlineAddsTheTimeTheProcessWasStarved(t *testing.T) {
	is := is.New(t)
	m := &meter{}
	d, clock, expired := deadlineAt(m)
	m.starve(300 * time.Millisecond) // the process could not run for 300 ms of the second
	clock.Advance(time.Second)
	is.Equal(expired.Load(), int32(0)) // extended by what it lost
	clock.Advance(299 * time.Millisecond)
	is.Equal(expired.Load(), int32(0))
	clock.Advance(time.Millisecond)
	is.Equal(expired.Load(), int32(1))
	_, granted := d.stop()
	is.Equal(granted, 300*time.Millisecond)
}

func TestAStallDeadlineAddsAtMostFiveTimeouts(t *testing.T) {
	is := is.New(t)
	m := &meter{}
	_, clock, expired := deadlineAt(m)
	for range 20 { // starved for ever: the wait still ends
		m.starve(time.Hour)
		clock.Advance(time.Hour)
	}
	is.Equal(expired.Load(), int32(1))
	is.Equal(len(clock.Pending()), 0)
}

func TestAStoppedStallDeadlineNeverExpires(t *testing.T) {
	is := is.New(t)
	d, clock, expired := deadlineAt(nil) // no meter: a plain timeout
	gone, _ := d.stop()
	is.True(!gone)
	clock.Advance(time.Hour)
	is.Equal(expired.Load(), int32(0))
}

func TestTheStallMonitorMeasuresAStarvedProcess(t *testing.T) {
	is := is.New(t)
	m := NewStallMonitor()
	m.Start()
	defer m.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var spin sync.WaitGroup
	for range 4 * runtime.GOMAXPROCS(0) { // more runnable goroutines than CPUs
		spin.Go(func() {
			for ctx.Err() == nil && m.Stalled() == 0 {
				for i := 0; i < 100_000; i++ {
					_ = i * i
				}
			}
		})
	}
	spin.Wait()
	is.True(m.Stalled() > 0) // the monitor waited for a CPU, and counted it
}
