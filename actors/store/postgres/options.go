package postgres

import "github.com/mcpflow/mcpflow/actors/store"

// Option is a setting of Open.
type Option func(*options)

// options are the settings of Open.
type options struct {
	store  store.Options
	node   string
	member *Membership
}

// WithNode opens the store for node id of a cluster: the runs it creates
// and commits are that node's, it commits no run that another node is
// running (store.ErrFenced), RecoverRunning recovers only that node's
// runs, and ClaimRuns moves runs to it. Without it the node is "", that
// of a store used by one node alone.
func WithNode(id string) Option {
	return func(o *options) { o.node = id }
}

// Membership is the fence a store of a cluster node puts on the node's
// new work: the store creates a run, or takes an interrupted run to run,
// only while the node holds its membership lease, checked in the
// statement or transaction of the write (store.ErrNotMember otherwise).
// A node whose lease lapsed (it was paused, or cut off, past its ttl) may
// have had its runs claimed by another node: a run it created then would
// be claimed too, or left running on a node that is not a member.
type Membership struct {
	// Key is the key of the node's membership lease
	// (membership.NodeKey); its owner is the store's node.
	Key string
	// Held is the query of a row while owner holds a live lease on key,
	// which it locks until the transaction ends (lease.HeldQuery, the
	// owner of the leases table's SQL); key and owner are the SQL
	// expressions it is given.
	Held func(key, owner string) string
}

// WithMembership fences the runs the store's node (WithNode) creates or
// resumes on its membership m. Without it the store does not look at
// the node's membership.
func WithMembership(m Membership) Option {
	return func(o *options) { o.member = &m }
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
