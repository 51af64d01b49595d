package lease

import (
	"errors"
	"fmt"
	"time"
)

// DefaultTTL is how long a lease lasts after each renewal unless told
// otherwise.
const DefaultTTL = 10 * time.Second

// Lease is one tenure of an owner on a key, as the database granted or
// last renewed it.
type Lease struct {
	Key   string
	Owner string
	// Epoch numbers the key's tenures, from 1; a later tenure has a
	// greater epoch.
	Epoch int64
	// TTL is how far each renewal moves the expiry past the database's
	// time of the renewal.
	TTL time.Duration
	// RenewedAt and ExpiresAt are the database's times of the last
	// acquisition or renewal and of the expiry.
	RenewedAt time.Time
	ExpiresAt time.Time
}

// Status is a lease as read from the table, judged at the database's time
// of the read.
type Status struct {
	Key       string
	Owner     string
	Epoch     int64
	RenewedAt time.Time
	ExpiresAt time.Time
	// Live says whether the lease had not expired at the time of the read,
	// and Remaining how long it had left then (0 once expired).
	Live      bool
	Remaining time.Duration
}

var (
	// ErrHeld is the error of an Acquire of a key that another owner
	// holds; the error is a *HeldError that names it.
	ErrHeld = errors.New("held by another owner")
	// ErrLost is the error of a renewal or release of a lease that has
	// ended: it expired, was released, or another tenure replaced it.
	ErrLost = errors.New("lease lost")
	// ErrStale is Check's error for an epoch that a later tenure of the
	// key has superseded.
	ErrStale = errors.New("stale epoch")
	// ErrNotFound is the error for a key that has no lease, or no lease
	// of the epoch asked about.
	ErrNotFound = errors.New("no such lease")
)

// HeldError says who holds a key that Acquire could not take, and until
// when. It is ErrHeld to errors.Is.
type HeldError struct {
	Key       string
	Owner     string
	Epoch     int64
	ExpiresAt time.Time // the database's time
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("lease %q is held by %q (epoch %d) until %s", e.Key, e.Owner, e.Epoch,
		e.ExpiresAt.UTC().Format(time.RFC3339Nano))
}

// Is makes a *HeldError match ErrHeld.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }
