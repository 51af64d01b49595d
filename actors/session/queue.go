package session

import (
	"fmt"
	"time"
)

// admit starts w now, queues it, or refuses it. A call that arrives while
// the session is connecting or backing off waits for it, until its own
// deadline; only a degraded connection fails calls at once.
func (a *Actor) admit(w work) {
	switch {
	case !w.deadline().IsZero() && a.clock.Now().After(w.deadline()):
		a.fail(w, fmt.Errorf("connection %q: %w", a.conn.ID, ErrDeadline))
		return
	case a.degraded:
		a.fail(w, a.degradedError())
		return
	case a.loginNeeded != nil:
		a.fail(w, a.loginNeeded)
		return
	case a.state == StateOpen && len(a.running) < a.opts.MaxInFlight && len(a.queue) == 0:
		a.start(w)
		return
	case len(a.queue) >= a.opts.MaxQueued:
		a.fail(w, fmt.Errorf("connection %q: %w (%d queued)", a.conn.ID, ErrOverloaded, len(a.queue)))
		return
	}
	a.queue = append(a.queue, w)
	a.scheduleSweep(w.deadline())
	if a.state == StateIdle {
		a.connect()
	}
}

// degradedError is what calls to a degraded connection fail with.
func (a *Actor) degradedError() error {
	next := "now"
	if d := a.nextTry.Sub(a.clock.Now()); d > 0 {
		next = "in " + d.Round(time.Millisecond).String()
	}
	return fmt.Errorf("connection %q: %w: %s; calls fail fast until a probe connects (next probe %s); last error: %s",
		a.conn.ID, ErrDegraded, a.degradedWhy, next, a.lastErr)
}

// listQueued reports whether a catalog listing waits in the queue.
func (a *Actor) listQueued() bool {
	for _, w := range a.queue {
		if w.list != nil {
			return true
		}
	}
	return false
}

// scheduleSweep makes sure the queue is swept by deadline d, so queued
// work fails when its own deadline passes, not only when it leaves the
// queue.
func (a *Actor) scheduleSweep(d time.Time) {
	if d.IsZero() || (!a.sweepAt.IsZero() && !d.Before(a.sweepAt)) {
		return
	}
	a.sweepAt = d
	a.after(&a.sweepTimer, d.Sub(a.clock.Now()), sweep{})
}

// sweepQueue fails queued work past its deadline and schedules the next
// sweep.
func (a *Actor) sweepQueue() {
	a.sweepAt = time.Time{}
	now, next := a.clock.Now(), time.Time{}
	kept := a.queue[:0]
	for _, w := range a.queue {
		d := w.deadline()
		switch {
		case !d.IsZero() && !now.Before(d):
			a.fail(w, a.waitedError())
		default:
			kept = append(kept, w)
			if !d.IsZero() && (next.IsZero() || d.Before(next)) {
				next = d
			}
		}
	}
	clear(a.queue[len(kept):])
	a.queue = kept
	a.scheduleSweep(next)
}

// waitedError is what queued work fails with at its deadline: it says
// what the session was doing meanwhile.
func (a *Actor) waitedError() error {
	switch a.state {
	case StateOpen:
		return fmt.Errorf("connection %q: %w (waited in the queue)", a.conn.ID, ErrDeadline)
	case StateConnecting:
		return fmt.Errorf("connection %q: %w (waited for the session to connect)", a.conn.ID, ErrDeadline)
	}
	return fmt.Errorf("connection %q: %w (waited for a reconnect; last error: %s)", a.conn.ID, ErrDeadline, a.lastErr)
}

// drain starts queued work while the session has free slots.
func (a *Actor) drain() {
	for a.state == StateOpen && len(a.running) < a.opts.MaxInFlight && len(a.queue) > 0 {
		w := a.queue[0]
		a.queue[0] = work{}
		a.queue = a.queue[1:]
		if d := w.deadline(); !d.IsZero() && a.clock.Now().After(d) {
			a.fail(w, fmt.Errorf("connection %q: %w", a.conn.ID, ErrDeadline))
			continue
		}
		a.start(w)
	}
}

// cancelCalls withdraws owner's queued calls and cancels its calls in
// flight (their goroutines answer when the upstream call returns); a
// task call's task is cancelled upstream too, unless keepTasks.
func (a *Actor) cancelCalls(owner string, keepTasks bool) {
	if owner == "" {
		return
	}
	kept := a.queue[:0]
	for _, w := range a.queue {
		if w.owner() == owner {
			a.fail(w, fmt.Errorf("connection %q: %w", a.conn.ID, ErrCancelled))
			continue
		}
		kept = append(kept, w)
	}
	clear(a.queue[len(kept):])
	a.queue = kept
	for run, f := range a.running {
		if f.w.owner() == owner {
			if keepTasks && f.keepTask != nil {
				f.keepTask.Store(true)
			}
			// The call's context ends before its asks are answered: a
			// withdrawn elicitation is answered "cancel", which lets the
			// tool return, and a result that came back before the
			// context ended would be the cancelled call's answer.
			f.cancel()
			a.withdrawAsks(run, "cancelled")
		}
	}
}

// failListings fails the queued catalog listings with err: a refresh
// reports a connect that failed at once, rather than at its deadline
// (calls wait for the reconnect; a listing the actor queued itself is
// made again once a session opens).
func (a *Actor) failListings(err error) {
	kept := a.queue[:0]
	for _, w := range a.queue {
		if w.list != nil {
			a.fail(w, err)
			continue
		}
		kept = append(kept, w)
	}
	clear(a.queue[len(kept):])
	a.queue = kept
}

// failQueue fails every queued call with err.
func (a *Actor) failQueue(err error) {
	for _, w := range a.queue {
		a.fail(w, err)
	}
	a.queue = nil
}
