package runs

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
)

// Member is the node's membership of its cluster, as the Manager waits
// for it (the cluster node, which the app gives it).
type Member interface {
	// WaitMember returns nil once the node holds its membership lease
	// (it has rejoined after the lease lapsed), or ctx's error.
	WaitMember(ctx context.Context) error
}

// defaultMemberWait bounds the wait for the node to rejoin when
// Config.MemberWait is 0.
const defaultMemberWait = 20 * time.Second

// asMember runs try, a start or a resume, and, when the store refused it
// because the node's cluster membership had lapsed (store.ErrNotMember),
// waits for the node to rejoin, up to Config.MemberWait and ctx's end, and
// runs it once more. A node paused or cut off past its lease's ttl takes
// no new run until it has rejoined: other nodes may have claimed its
// runs, and would claim a run it created meanwhile (docs/decisions.md,
// "Cluster: a node whose membership lapsed creates no run"). The error of
// a wait that ends first is ErrNotMember.
func (m *Manager) asMember(ctx context.Context, id string, try func() (store.Run, error)) (store.Run, error) {
	r, err := try()
	if !errors.Is(err, store.ErrNotMember) {
		return r, err
	}
	if m.cfg.Member == nil {
		return store.Run{}, ErrNotMember
	}
	wait := cmp.Or(m.cfg.MemberWait, defaultMemberWait)
	slog.Warn("run refused: this node's cluster membership lapsed; waiting for it to rejoin", "run", id, "wait", wait)
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := m.cfg.Member.WaitMember(wctx); err != nil {
		slog.Warn("run refused: this node did not rejoin its cluster in time", "run", id, "err", err)
		return store.Run{}, ErrNotMember
	}
	r, err = try()
	if errors.Is(err, store.ErrNotMember) {
		return store.Run{}, ErrNotMember // lapsed again already
	}
	return r, err
}
