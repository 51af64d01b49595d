package supervisor

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/guard"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
)

// Handle is how code outside the actor system talks to the supervisor:
// each method is one message and a bounded wait for its reply.
type Handle struct {
	engine   *actor.Engine
	pid      *actor.PID
	replies  *reply.Router // the answers the handle's methods wait for
	lines    *Lines
	authHash AuthHash
	// stopped is set by the first Stop: a later one only waits for the
	// supervisor to be gone.
	stopped atomic.Bool
}

// Spawn starts the supervisor of conns on engine.
func Spawn(engine *actor.Engine, conns []config.Connection, factory session.TransportFactory, catalogs store.Catalogs, opts Options) *Handle {
	replies, lines := reply.NewRouter(engine, "mcp"), NewLines()
	pid := engine.Spawn(guard.Producer(New(conns, factory, catalogs, replies, lines, opts), nil), "supervisor",
		actor.WithID("mcp"))
	return &Handle{engine: engine, pid: pid, replies: replies, lines: lines, authHash: opts.AuthHash}
}

// Reconcile makes conns, the complete effective set, the supervisor's
// connections (see Reconcile). It fingerprints them here, off the actor,
// and returns once removed, disabled and replaced sessions are closed.
func (h *Handle) Reconcile(ctx context.Context, conns []config.Connection) (Reconciled, error) {
	fps := fingerprints(ctx, conns, h.authHash)
	w := reply.Expect[Reconciled](h.replies)
	deadline, _ := ctx.Deadline()
	h.engine.Send(h.pid, Reconcile{Connections: conns, Fingerprints: fps, Deadline: deadline, Reply: w.To()})
	r, err := w.Wait(ctx)
	if err != nil {
		return Reconciled{}, fmt.Errorf("reconcile connections: %w", err)
	}
	return r, nil
}

// PID is the supervisor's: where the messages for its session actors go
// that no line takes (Lines).
func (h *Handle) PID() *actor.PID { return h.pid }

// Lines are the direct lines to the supervisor's session actors, over
// which tool calls go (Lines.Call).
func (h *Handle) Lines() *Lines { return h.lines }

// RefreshCatalog lists and stores connection's catalog.
func (h *Handle) RefreshCatalog(ctx context.Context, connection string) (catalog.Snapshot, error) {
	w := reply.Expect[CatalogRefreshed](h.replies)
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(time.Minute)
	}
	h.engine.Send(h.pid, RefreshCatalog{Connection: connection, Deadline: deadline, Reply: w.To()})
	r, err := w.Wait(ctx)
	if err != nil {
		return catalog.Snapshot{}, fmt.Errorf("refresh catalog of %q: %w", connection, err)
	}
	return r.Snapshot, r.Error.Err()
}

// ReleaseScope stops every session of scope (see ReleaseScope); it does
// not wait for them to close.
func (h *Handle) ReleaseScope(scope string) {
	h.engine.Send(h.pid, ReleaseScope{Scope: scope})
}

// Statuses returns the live status of every configured connection.
func (h *Handle) Statuses(ctx context.Context) ([]session.Status, error) {
	w := reply.Expect[Statuses](h.replies)
	h.engine.Send(h.pid, GetStatuses{Reply: w.To()})
	r, err := w.Wait(ctx)
	if err != nil {
		return nil, fmt.Errorf("connection statuses: %w", err)
	}
	return r.Connections, nil
}

// Stop stops the supervisor and its session actors, which close their
// upstream sessions; it returns when they are gone or ctx ends.
//
// The sessions close in parallel. Poisoned, hollywood stops a parent's
// children one at a time, and each session actor takes up to its
// CloseTimeout to close a hung upstream: n hung servers would take n
// times as long. So Stop first reconciles the supervisor to no
// connections, which stops every session actor at once and ends their
// stdio process groups (see Reconcile), and only then poisons it.
func (h *Handle) Stop(ctx context.Context) error {
	if !h.stopped.Swap(true) {
		if _, err := h.Reconcile(ctx, nil); err != nil {
			return fmt.Errorf("stop supervisor: %w", err)
		}
	}
	select {
	case <-h.engine.Poison(h.pid).Done():
		return h.replies.Stop(ctx)
	case <-ctx.Done():
		return fmt.Errorf("stop supervisor: %w", ctx.Err())
	}
}
