package session

import "sync"

// Limiter bounds how many connects run at once across every session actor
// that shares it, so that many connections failing together (an upstream
// host going down, a restart of mcpflow) do not reconnect in a storm.
// Waiters are served first come, first served. It never blocks: a lease
// that cannot start at once is granted later through its callback. Safe
// for concurrent use; a nil *Limiter grants everything at once.
type Limiter struct {
	mu      sync.Mutex
	max     int
	active  int
	waiting []*Lease
	granted int // leases granted so far, for tests and status
}

// NewLimiter returns a limiter of n concurrent connects (at least 1).
func NewLimiter(n int) *Limiter {
	return &Limiter{max: max(n, 1)}
}

// Lease is one slot of a Limiter, held or waited for.
type Lease struct {
	l       *Limiter
	onGrant func()
	state   leaseState
}

type leaseState int

const (
	leaseWaiting leaseState = iota
	leaseHeld
	leaseDone
)

// Acquire asks for a slot. When one is free it is taken at once and
// Acquire returns granted; otherwise onGrant is called later, from the
// goroutine of the Release that frees a slot, and must not block (a
// session actor sends itself a message). Release the lease in both cases.
func (l *Limiter) Acquire(onGrant func()) (lease *Lease, granted bool) {
	if l == nil {
		return &Lease{state: leaseHeld}, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	lease = &Lease{l: l, onGrant: onGrant}
	if l.active < l.max && len(l.waiting) == 0 {
		l.active++
		l.granted++
		lease.state = leaseHeld
		return lease, true
	}
	l.waiting = append(l.waiting, lease)
	return lease, false
}

// Release gives the slot back, or stops waiting for one. It is idempotent
// and safe on a nil lease.
func (le *Lease) Release() {
	if le == nil || le.l == nil {
		return
	}
	l := le.l
	l.mu.Lock()
	var grant func()
	switch le.state {
	case leaseWaiting:
		for i, w := range l.waiting {
			if w == le {
				l.waiting = append(l.waiting[:i], l.waiting[i+1:]...)
				break
			}
		}
	case leaseHeld:
		l.active--
		if len(l.waiting) > 0 && l.active < l.max {
			next := l.waiting[0]
			l.waiting = l.waiting[1:]
			next.state = leaseHeld
			l.active++
			l.granted++
			grant = next.onGrant
		}
	}
	le.state = leaseDone
	l.mu.Unlock()
	if grant != nil {
		grant()
	}
}

// Held reports whether the lease holds a slot now.
func (le *Lease) Held() bool {
	if le == nil {
		return false
	}
	if le.l == nil {
		return le.state == leaseHeld
	}
	le.l.mu.Lock()
	defer le.l.mu.Unlock()
	return le.state == leaseHeld
}

// LimiterStats is a limiter's state.
type LimiterStats struct {
	Max, Active, Waiting, Granted int
}

// Stats returns how many slots are held and waited for.
func (l *Limiter) Stats() LimiterStats {
	if l == nil {
		return LimiterStats{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return LimiterStats{Max: l.max, Active: l.active, Waiting: len(l.waiting), Granted: l.granted}
}
