package session

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Policy is how a connection is supervised. It tells bad luck from a
// crash loop by whether the session that ended had proved itself (see
// ProvedItself): the death of one that had is bad luck (an OOM killer, a
// deploy, a user killed the server), and the session is reopened at once,
// its backoff and its failed starts forgotten. A failed start — a connect
// or initialize that fails, or a session that dies unproven — is retried
// after a capped, jittered exponential backoff; too many failed starts
// within a window, with no proven session between them, degrade the
// connection, and a background probe then tries it every ProbeInterval
// until one connect works.
type Policy struct {
	// MinBackoff is the wait before the first retry, each next one
	// doubles up to MaxBackoff.
	MinBackoff, MaxBackoff time.Duration
	// Jitter, up to 1, is the fraction of each wait drawn at random: a
	// wait of d becomes one between d·(1−Jitter) and d, so that
	// connections that failed together do not retry together. It also
	// spreads each open session's keepalive interval the same way, so
	// that sessions opened together do not ping together. 0 or less is
	// none.
	Jitter float64
	// ProvedAfter is how long a session that answers no call must stay
	// open to prove itself; one that answers a call proves itself at
	// once. 0: only an answered call proves a session.
	ProvedAfter time.Duration
	// MaxRestarts failed starts are retried within RestartWindow; the
	// failed start that would need one more degrades the connection
	// (calls fail fast) until a probe succeeds. 0 never degrades.
	MaxRestarts   int
	RestartWindow time.Duration
	// ProbeInterval is how often a degraded connection is tried.
	ProbeInterval time.Duration
}

// DefaultPolicy is the production supervision policy.
func DefaultPolicy() Policy {
	return Policy{
		MinBackoff:    250 * time.Millisecond,
		MaxBackoff:    30 * time.Second,
		Jitter:        0.2,
		ProvedAfter:   10 * time.Second,
		MaxRestarts:   5,
		RestartWindow: time.Minute,
		ProbeInterval: 30 * time.Second,
	}
}

// Validate reports a policy that cannot work.
func (p Policy) Validate() error {
	switch {
	case p.MinBackoff <= 0 || p.MaxBackoff < p.MinBackoff:
		return fmt.Errorf("backoff: need 0 < min (%s) <= max (%s)", p.MinBackoff, p.MaxBackoff)
	case p.Jitter > 1:
		return fmt.Errorf("jitter %.2f: need at most 1", p.Jitter)
	case p.ProvedAfter < 0:
		return fmt.Errorf("proved-after %s: need 0 or more", p.ProvedAfter)
	case p.MaxRestarts < 0:
		return fmt.Errorf("max restarts %d: need 0 or more", p.MaxRestarts)
	case p.MaxRestarts > 0 && p.RestartWindow <= 0:
		return fmt.Errorf("restart window %s: need more than 0", p.RestartWindow)
	case p.ProbeInterval <= 0:
		return fmt.Errorf("probe interval %s: need more than 0", p.ProbeInterval)
	}
	return nil
}

// ProvedItself reports whether a session that opened at opened and ended
// (or is judged) at now proved itself: it answered a call (a tool call or
// a resource read, even with a tool error or a JSON-RPC error: the server
// worked), or it stayed open ProvedAfter. A catalog listing or a ping
// proves nothing: a server that lists its tools and dies on every call is
// in a crash loop.
func (p Policy) ProvedItself(opened, now time.Time, answered bool) bool {
	return answered || p.ProvedAfter > 0 && !now.Before(opened.Add(p.ProvedAfter))
}

// Backoff counts consecutive failures and gives the wait before the next
// attempt. The zero value has no failures; set Policy (and, in tests,
// Rand) before use.
type Backoff struct {
	Policy Policy
	// Rand returns a number in [0, 1); nil uses math/rand.
	Rand     func() float64
	failures int
}

// Failures is the number of consecutive failures so far.
func (b *Backoff) Failures() int { return b.failures }

// Next records one more failure and returns the wait before the next
// attempt: MinBackoff·2^(failures−1), capped at MaxBackoff, less a random
// part of up to Jitter of it.
func (b *Backoff) Next() time.Duration {
	b.failures++
	d := b.Policy.MinBackoff
	for i := 1; i < b.failures && d < b.Policy.MaxBackoff; i++ {
		d *= 2
	}
	return jittered(min(d, b.Policy.MaxBackoff), b.Policy.Jitter, b.Rand)
}

// jittered is d less a random part of up to jitter (a fraction, up to 1)
// of it, drawn with r (nil: math/rand): a wait between d·(1−jitter) and
// d, never more than d.
func jittered(d time.Duration, jitter float64, r func() float64) time.Duration {
	if jitter > 0 {
		if r == nil {
			r = rand.Float64
		}
		d -= time.Duration(min(jitter, 1) * r() * float64(d))
	}
	return max(d, 0)
}

// Reset forgets the failures: the next wait is MinBackoff again.
func (b *Backoff) Reset() { b.failures = 0 }

// Intensity keeps the restarts of the last Window and says when they are
// too many.
type Intensity struct {
	Max    int
	Window time.Duration
	times  []time.Time
}

// NewIntensity returns the restart limit of p, remembering recent, the
// restart times a previous incarnation had kept.
func NewIntensity(p Policy, recent []time.Time) *Intensity {
	return &Intensity{Max: p.MaxRestarts, Window: p.RestartWindow, times: append([]time.Time(nil), recent...)}
}

// Allow records a restart wanted at now and reports whether it may
// happen: false once Max restarts already happened within Window (the
// refused one is not recorded). Max 0 allows every restart.
func (i *Intensity) Allow(now time.Time) bool {
	i.prune(now)
	if i.Max > 0 && len(i.times) >= i.Max {
		return false
	}
	i.times = append(i.times, now)
	return true
}

// Recent returns the restart times within the window that ends at now.
func (i *Intensity) Recent(now time.Time) []time.Time {
	i.prune(now)
	return append([]time.Time(nil), i.times...)
}

// Reset forgets every restart.
func (i *Intensity) Reset() { i.times = nil }

func (i *Intensity) prune(now time.Time) {
	kept := i.times[:0]
	for _, t := range i.times {
		if now.Sub(t) < i.Window {
			kept = append(kept, t)
		}
	}
	clear(i.times[len(kept):])
	i.times = kept
}
