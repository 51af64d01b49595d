package lease

import "time"

// Clock is the time source of a Keeper's schedule: when it renews, how
// long a renewal may take, and when it gives up a lease it could not
// renew. Only durations on it
// matter, never its reading of the date. Production uses SystemClock;
// tests drive a manual one.
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

// SystemClock is the machine's clock, whose monotonic reading measures
// the durations.
func SystemClock() Clock { return systemClock{} }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
