package store

import "fmt"

// MaxEvents is how many admin events a store keeps unless WithMaxEvents
// says otherwise.
const MaxEvents = 10_000

// Options are the settings every implementation of Store takes at open.
type Options struct {
	// MaxEvents is how many of the newest admin events the store keeps.
	MaxEvents int
	// Sealer, when set, seals auth record payloads at rest (WithSealer).
	Sealer Sealer
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

// NewOptions returns the defaults with opts applied, for implementations of
// Store.
func NewOptions(opts ...Option) Options {
	o := Options{MaxEvents: MaxEvents}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}
