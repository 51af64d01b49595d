package session_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/session"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestBackoffDoublesFromTheMinimumUpToTheCap(t *testing.T) {
	is := is.New(t)
	b := session.Backoff{Policy: session.Policy{MinBackoff: 50 * time.Millisecond, MaxBackoff: 300 * time.Millisecond}}
	var got []time.Duration
	for range 5 {
		got = append(got, b.Next())
	}
	is.Equal(got, []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond})
	is.Equal(b.Failures(), 5)
	b.Reset()
	is.Equal(b.Next(), 50*time.Millisecond) // reset: from the minimum again
}

func TestBackoffJitterTakesUpToItsFractionOffAndNeverExceedsTheCap(t *testing.T) {
	is := is.New(t)
	r := 0.0
	b := session.Backoff{Policy: session.Policy{MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second, Jitter: 0.5}, Rand: func() float64 { return r }}
	is.Equal(b.Next(), 100*time.Millisecond) // r = 0: the whole wait
	r = 0.999999
	d := b.Next() // 200 ms less almost half
	is.True(d > 100*time.Millisecond && d <= 101*time.Millisecond)
	r = 0.5
	for range 10 {
		d = b.Next()
		is.True(d <= time.Second) // capped
	}
	is.Equal(d, 750*time.Millisecond) // 1 s less a quarter
}

func TestIntensityAllowsMaxRestartsPerWindow(t *testing.T) {
	is := is.New(t)
	clock := session.NewManualClock(epoch)
	i := session.NewIntensity(session.Policy{MaxRestarts: 3, RestartWindow: time.Minute}, nil)
	for range 3 {
		is.True(i.Allow(clock.Now()))
		clock.Advance(10 * time.Second)
	}
	is.True(!i.Allow(clock.Now())) // a fourth within the minute: refused
	is.Equal(len(i.Recent(clock.Now())), 3)
	clock.Advance(31 * time.Second) // the first restart leaves the window
	is.Equal(len(i.Recent(clock.Now())), 2)
	is.True(i.Allow(clock.Now()))
	is.True(!i.Allow(clock.Now()))
	i.Reset()
	is.True(i.Allow(clock.Now()))
}

func TestIntensityContinuesFromAPredecessorsRestarts(t *testing.T) {
	is := is.New(t)
	clock := session.NewManualClock(epoch)
	recent := []time.Time{clock.Now().Add(-50 * time.Second), clock.Now().Add(-10 * time.Second), clock.Now().Add(-2 * time.Minute)}
	i := session.NewIntensity(session.Policy{MaxRestarts: 3, RestartWindow: time.Minute}, recent)
	is.True(i.Allow(clock.Now()))  // two of three still count
	is.True(!i.Allow(clock.Now())) // the limit is reached
}

func TestIntensityZeroNeverRefuses(t *testing.T) {
	is := is.New(t)
	i := session.NewIntensity(session.Policy{RestartWindow: time.Minute}, nil)
	for range 100 {
		is.True(i.Allow(epoch))
	}
}

func TestASessionProvesItselfByAnsweringACallOrStayingOpenLongEnough(t *testing.T) {
	is := is.New(t)
	p := session.Policy{ProvedAfter: 10 * time.Second}
	is.True(!p.ProvedItself(epoch, epoch.Add(9*time.Second), false))  // died young, answered nothing: a failed start
	is.True(p.ProvedItself(epoch, epoch.Add(time.Millisecond), true)) // answered a call: proved at once
	is.True(p.ProvedItself(epoch, epoch.Add(10*time.Second), false))  // stayed open long enough
	p.ProvedAfter = 0                                                 // only an answer proves a session
	is.True(!p.ProvedItself(epoch, epoch.Add(time.Hour), false))
	is.True(p.ProvedItself(epoch, epoch, true))
	is.Equal(session.DefaultPolicy().ProvedAfter, 10*time.Second)
}

func TestPolicyValidateRefusesWhatCannotWork(t *testing.T) {
	is := is.New(t)
	is.NoErr(session.DefaultPolicy().Validate())
	is.True(session.Policy{MinBackoff: time.Second, MaxBackoff: time.Second, ProbeInterval: time.Second, ProvedAfter: -time.Second}.Validate() != nil)
	is.True(session.Policy{MinBackoff: time.Second, MaxBackoff: time.Millisecond, ProbeInterval: time.Second}.Validate() != nil)
	is.True(session.Policy{MinBackoff: time.Second, MaxBackoff: time.Second, ProbeInterval: time.Second, MaxRestarts: 3}.Validate() != nil) // no window
}

func TestLimiterGrantsUpToItsBoundThenInOrder(t *testing.T) {
	is := is.New(t)
	l := session.NewLimiter(2)
	var order []int
	grant := func(n int) func() { return func() { order = append(order, n) } }
	a, ok := l.Acquire(grant(1))
	is.True(ok)
	b, ok := l.Acquire(grant(2))
	is.True(ok)
	c, ok := l.Acquire(grant(3))
	is.True(!ok) // the bound is reached: it waits
	d, ok := l.Acquire(grant(4))
	is.True(!ok)
	is.Equal(l.Stats(), session.LimiterStats{Max: 2, Active: 2, Waiting: 2, Granted: 2})

	a.Release()
	is.Equal(order, []int{3}) // first come, first served
	is.True(c.Held())
	a.Release() // idempotent
	is.Equal(l.Stats().Active, 2)

	d.Release() // stops waiting
	b.Release()
	c.Release()
	is.Equal(order, []int{3})
	is.Equal(l.Stats(), session.LimiterStats{Max: 2, Active: 0, Waiting: 0, Granted: 3})
	e, ok := l.Acquire(grant(5))
	is.True(ok)
	e.Release()
}

func TestNilLimiterGrantsEverything(t *testing.T) {
	is := is.New(t)
	var l *session.Limiter
	lease, ok := l.Acquire(func() {})
	is.True(ok)
	is.True(lease.Held())
	lease.Release()
}

func TestManualClockFiresTimersInOrderOnlyWhenAdvanced(t *testing.T) {
	is := is.New(t)
	clock := session.NewManualClock(epoch)
	var fired []string
	clock.AfterFunc(2*time.Second, func() { fired = append(fired, "b") })
	clock.AfterFunc(time.Second, func() { fired = append(fired, "a") })
	stopped := clock.AfterFunc(time.Second, func() { fired = append(fired, "never") })
	is.True(stopped.Stop())
	is.Equal(clock.Pending(), []time.Duration{time.Second, 2 * time.Second})
	is.Equal(clock.Advance(999*time.Millisecond), 0)
	is.Equal(clock.Advance(5*time.Second), 2)
	is.Equal(fired, []string{"a", "b"})

	var armed atomic.Bool
	go func() {
		clock.AfterFunc(time.Minute, func() {})
		armed.Store(true)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	is.True(clock.WaitFor(ctx, func(p []time.Duration) bool { return len(p) == 1 }))
	is.True(armed.Load() || len(clock.Pending()) == 1)
}
