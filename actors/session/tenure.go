package session

import (
	"context"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/reply"
)

// Tenure is a node's ownership of a connection in a cluster: the lease
// that gives one node at a time the connection's upstream session (see
// docs/cluster.md). A session actor with a tenure (Options.Tenure) claims
// each session's generation from it before it connects, so that
// generations grow across the whole cluster and a node whose tenure ended
// cannot open a session at all; and it checks the tenure before it sends
// each call upstream, so that a node paused past its lease, whose
// successor may have opened a session of its own meanwhile, sends
// nothing. On one node there is no tenure.
type Tenure interface {
	// Node is the owning node's id, and Epoch the tenure's number: a
	// later owner's is greater.
	Node() string
	Epoch() int64
	// Valid reports, by the node's own clock, whether the tenure still
	// holds. It is called before every call, so it must be cheap.
	Valid() bool
	// NextGeneration claims the generation of the session about to
	// open, within ctx; it fails once the tenure has ended.
	NextGeneration(ctx context.Context) (int64, error)
}

// ErrNotOwner means the node no longer owns the connection: its tenure
// ended, and another node may hold the connection's session. It wraps
// ErrUnavailable.
var ErrNotOwner = reply.Register("not_owner", &childError{msg: "this node no longer owns the connection", parent: ErrUnavailable})

// fenced returns ErrNotOwner, in context, when the actor's tenure has
// ended; nil without a tenure or while it holds.
func (a *Actor) fenced() error {
	t := a.opts.Tenure
	if t == nil || t.Valid() {
		return nil
	}
	return fmt.Errorf("connection %q: %w (tenure %d of node %s ended)", a.conn.ID, ErrNotOwner, t.Epoch(), t.Node())
}

// claimGeneration claims the generation of the session a connect attempt
// opens: the tenure's next one, or 0 without a tenure (the actor then
// counts its own).
func claimGeneration(ctx context.Context, t Tenure) (int64, error) {
	if t == nil {
		return 0, nil
	}
	gen, err := t.NextGeneration(ctx)
	if err != nil {
		return 0, fmt.Errorf("claim a session generation: %w: %w", ErrNotOwner, err)
	}
	return gen, nil
}

// tenure names the actor's tenure for the answers of its calls: its node
// and epoch, or "" and 0 on one node.
func (a *Actor) tenure() (node string, epoch int64) {
	if t := a.opts.Tenure; t != nil {
		return t.Node(), t.Epoch()
	}
	return "", 0
}
