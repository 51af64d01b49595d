package store

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Space is whether a store can write, as its writes find it: full from a
// write that fails with ErrFull (or from an open that found the disk full,
// MarkFull) until the next write that succeeds. Each change is told to
// its onChange, after the change and outside any lock: with full, and
// when the store became full (the time of the change to full, or, on the
// way back, how long it had been full). A nil *Space tracks nothing.
type Space struct {
	onChange func(full bool, since time.Time)

	mu    sync.Mutex
	full  bool
	since time.Time
	// flag mirrors full, so that a write that succeeds while the disk is
	// not full takes no lock.
	flag atomic.Bool
}

// NewSpace is a Space, writable, that tells onChange (nil: nobody) of
// each change.
func NewSpace(onChange func(full bool, since time.Time)) *Space {
	return &Space{onChange: onChange}
}

// WithSpace makes a store report to sp whether its writes find space.
func WithSpace(sp *Space) Option {
	return func(o *Options) { o.Space = sp }
}

// Observe records a write's outcome, err, and returns it.
func (s *Space) Observe(err error) error {
	switch {
	case s == nil:
	case errors.Is(err, ErrFull):
		s.set(true)
	case err == nil && s.flag.Load():
		s.set(false)
	}
	return err
}

// MarkFull records that the store found its disk full other than by a
// write (it opened read-only).
func (s *Space) MarkFull() {
	if s != nil {
		s.set(true)
	}
}

// Full reports whether the store's disk is full, and since when.
func (s *Space) Full() (bool, time.Time) {
	if s == nil {
		return false, time.Time{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.full, s.since
}

// set records full, and tells onChange if it changed.
func (s *Space) set(full bool) {
	s.mu.Lock()
	if s.full == full {
		s.mu.Unlock()
		return
	}
	since := s.since
	if full {
		since = time.Now()
	}
	s.full, s.since = full, since
	s.flag.Store(full)
	s.mu.Unlock()
	if s.onChange != nil {
		s.onChange(full, since)
	}
}
