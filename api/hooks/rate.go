package hooks

import (
	"sync"
	"time"
)

// maxLimiters bounds the buckets kept: past it, the full ones (idle long
// enough to have refilled, so forgetting them changes nothing) are
// dropped. Only hooks that exist get a bucket.
const maxLimiters = 4096

// limiters are a token bucket per webhook.
type limiters struct {
	mu      sync.Mutex
	rate    float64 // tokens per second
	burst   float64
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
	// refused is whether a refusal was noted since the bucket last gave
	// a token (noteRefusal).
	refused bool
}

func newLimiters(rate float64, burst int) *limiters {
	return &limiters{rate: rate, burst: float64(burst), buckets: map[string]*bucket{}}
}

// allow takes a token of id's bucket at now, if there is one.
func (l *limiters) allow(id string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[id]
	if !ok {
		if len(l.buckets) >= maxLimiters {
			l.dropFull(now)
		}
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[id] = b
	}
	b.tokens = min(l.burst, b.tokens+now.Sub(b.at).Seconds()*l.rate)
	b.at = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	b.refused = false
	return true
}

// noteRefusal reports whether id's refusal is the first since its bucket
// last gave a token, and notes it: the log of a webhook's deliveries
// keeps one refusal of a flood per token given, so a flood writes to the
// store at most about twice the rate.
func (l *limiters) noteRefusal(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[id]
	if !ok || b.refused {
		return false
	}
	b.refused = true
	return true
}

// dropFull forgets the buckets that have refilled by now.
func (l *limiters) dropFull(now time.Time) {
	for id, b := range l.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*l.rate >= l.burst {
			delete(l.buckets, id)
		}
	}
}
