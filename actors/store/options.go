package store

import (
	"fmt"
	"time"
)

// MaxEvents is how many admin events a store keeps unless WithMaxEvents
// says otherwise.
const MaxEvents = 10_000

// Options are the settings every implementation of Store takes at open.
type Options struct {
	// MaxEvents is how many of the newest admin events the store keeps.
	MaxEvents int
	// Retention is how long a finished run is kept when its deployment
	// does not say (see RunExpiry); 0 keeps it for ever.
	Retention time.Duration
	// Sealer, when set, seals auth record payloads and the secret
	// transport values of registry entries at rest (WithSealer).
	Sealer Sealer
	// Space, when set, is told whether each write found space on the
	// store's disk (WithSpace).
	Space *Space
}

// Option sets one of the Options.
type Option func(*Options)

// WithMaxEvents makes a store keep the newest n admin events instead of
// MaxEvents. It panics unless n >= 1.
func WithMaxEvents(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("store.WithMaxEvents(%d): a store keeps at least one event", n))
	}
	return func(o *Options) { o.MaxEvents = n }
}

// WithRetention makes a store keep finished runs for d unless their
// deployment says otherwise, instead of DefaultRetention; 0 keeps them for
// ever. It panics if d is negative.
func WithRetention(d time.Duration) Option {
	if d < 0 {
		panic(fmt.Sprintf("store.WithRetention(%v): a retention is not negative", d))
	}
	return func(o *Options) { o.Retention = d }
}

// NewOptions returns the defaults with opts applied, for implementations of
// Store.
func NewOptions(opts ...Option) Options {
	o := Options{MaxEvents: MaxEvents, Retention: DefaultRetention}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}
