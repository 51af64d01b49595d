package postgres

import "github.com/mcpflow/mcpflow/actors/store"

// Option is a setting of Open.
type Option func(*options)

// options are the settings of Open.
type options struct {
	store store.Options
	node  string
}

// WithNode opens the store for node id of a cluster: the runs it creates
// and commits are that node's, it commits no run that another node is
// running (store.ErrFenced), RecoverRunning recovers only that node's
// runs, and ClaimRuns moves runs to it. Without it the node is "", that
// of a store used by one node alone.
func WithNode(id string) Option {
	return func(o *options) { o.node = id }
}

// WithStoreOptions applies the settings every store takes.
func WithStoreOptions(opts ...store.Option) Option {
	return func(o *options) {
		for _, opt := range opts {
			opt(&o.store)
		}
	}
}

// newOptions returns the defaults with opts applied.
func newOptions(opts ...Option) options {
	o := options{store: store.NewOptions()}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}
