package session

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// StallMeter tells how long, in all, the process has been starved of CPU
// (see StallMonitor). A keepalive ping's timeout does not count that time:
// a starved mcpflow is slow to read its upstream's answer, which does not
// make the upstream hung.
type StallMeter interface {
	Stalled() time.Duration
}

// stallPeriod is how often a StallMonitor wakes; stallSlack is lateness
// it does not count (timer and scheduler noise).
const (
	stallPeriod = 20 * time.Millisecond
	stallSlack  = 5 * time.Millisecond
)

// StallMonitor measures how long the process is starved of CPU: a
// goroutine that wakes every 20 ms adds up how late it wakes. Every other
// goroutine waits for a CPU as long, the session actors' included, so
// this is time in which no upstream answer could be read. Safe for
// concurrent use; its Stalled is 0 until Start.
type StallMonitor struct {
	stalled atomic.Int64 // nanoseconds
	cancel  context.CancelFunc
	done    chan struct{}
}

// NewStallMonitor returns a monitor; Start runs it.
func NewStallMonitor() *StallMonitor { return &StallMonitor{done: make(chan struct{})} }

// Start runs the monitor's goroutine until Stop.
func (m *StallMonitor) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go func() {
		defer close(m.done)
		timer := time.NewTimer(stallPeriod)
		defer timer.Stop()
		due := time.Now().Add(stallPeriod)
		for {
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
			// How late this goroutine runs is how long the process left it
			// waiting: its timer, then a CPU.
			now := time.Now()
			if late := now.Sub(due); late > stallSlack {
				m.stalled.Add(int64(late))
			}
			due = now.Add(stallPeriod)
			timer.Reset(stallPeriod)
		}
	}()
}

// Stop ends the monitor's goroutine and waits for it.
func (m *StallMonitor) Stop() {
	if m == nil || m.cancel == nil {
		return
	}
	m.cancel()
	<-m.done
}

// Stalled implements StallMeter.
func (m *StallMonitor) Stalled() time.Duration {
	if m == nil {
		return 0
	}
	return time.Duration(m.stalled.Load())
}

// maxStallGrace bounds what a starved process adds to a ping's timeout:
// at most this many times the timeout, so the ping still has a deadline.
const maxStallGrace = 5

// stallDeadline calls expire once a wait has lasted timeout of the time
// the process could run: the time meter says it was starved meanwhile is
// added, up to maxStallGrace times timeout in all.
type stallDeadline struct {
	clock   Clock
	meter   StallMeter
	expire  func()
	from    time.Duration // the meter at the start
	granted time.Duration // added so far
	limit   time.Duration

	mu    sync.Mutex
	timer Timer
	done  bool
}

// startStallDeadline arms the deadline; a nil meter adds nothing.
func startStallDeadline(clock Clock, timeout time.Duration, meter StallMeter, expire func()) *stallDeadline {
	d := &stallDeadline{clock: clock, meter: meter, expire: expire, limit: maxStallGrace * timeout}
	if meter != nil {
		d.from = meter.Stalled()
	}
	d.mu.Lock()
	d.timer = clock.AfterFunc(timeout, d.fire)
	d.mu.Unlock()
	return d
}

// fire expires the wait, or extends it by the starvation not yet granted.
func (d *stallDeadline) fire() {
	d.mu.Lock()
	if d.done {
		d.mu.Unlock()
		return
	}
	if d.meter != nil {
		owed := d.meter.Stalled() - d.from - d.granted
		if owed = min(owed, d.limit-d.granted); owed > stallSlack {
			d.granted += owed
			d.timer = d.clock.AfterFunc(owed, d.fire)
			d.mu.Unlock()
			return
		}
	}
	d.done = true
	d.mu.Unlock()
	d.expire()
}

// stop cancels the deadline if it has not expired; it reports whether it
// had, and how much starvation it granted.
func (d *stallDeadline) stop() (expired bool, granted time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	expired = d.done
	d.done = true
	d.timer.Stop()
	return expired, d.granted
}
