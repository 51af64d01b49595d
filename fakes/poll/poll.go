package poll

import (
	"testing"
	"time"

	"github.com/matryer/is"
)

// The interval between two checks starts at firstInterval and doubles
// up to maxInterval, so a condition that holds soon is seen soon and a
// slow one is not checked in a busy loop.
const (
	firstInterval = time.Millisecond
	maxInterval   = 20 * time.Millisecond
)

// For checks cond until it holds, failing t (FailNow) with what if it
// still does not hold within the duration given. Call it from the test's
// goroutine.
func For(t testing.TB, what string, within time.Duration, cond func() bool) {
	t.Helper()
	if !Until(within, cond) {
		fail(t, what, within)
	}
}

// Value calls get until it reports ok, and returns the value it gave
// then; it fails t like For if get does not report ok within the
// duration given.
func Value[T any](t testing.TB, what string, within time.Duration, get func() (T, bool)) T {
	t.Helper()
	var v T
	if !Until(within, func() bool {
		var ok bool
		v, ok = get()
		return ok
	}) {
		fail(t, what, within)
	}
	return v
}

// Until checks cond until it holds or the duration given has passed, and
// reports whether it held: for a test that asserts on the answer itself.
func Until(within time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	interval := firstInterval
	tick := time.NewTimer(interval)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			return cond()
		case <-tick.C:
		}
		interval = min(2*interval, maxInterval)
		tick.Reset(interval)
	}
	return true
}

// fail logs what was waited for and ends the test.
func fail(t testing.TB, what string, within time.Duration) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	t.Logf("not within %s: %s", within, what)
	is.Fail() // the condition holds in time
}
