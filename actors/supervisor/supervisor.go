// Package supervisor owns the supervisor actor: it spawns one session actor
// per MCP source connection on first use, routes tool calls and catalog
// refreshes to it, stores catalog snapshots, keeps each connection's status,
// reconciles its set of connections when the source registry is applied
// (starting, stopping and replacing session actors), and applies mcpflow's
// own restart policy when a session actor panics (hollywood's is never
// reached: every actor runs behind guard.Recover).
package supervisor

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/guard"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
)

// RefreshCatalog lists a connection's catalog through its session and
// stores the snapshot.
type RefreshCatalog struct {
	Connection string
	Deadline   time.Time
	Reply      reply.To[CatalogRefreshed]
}

// CatalogRefreshed answers RefreshCatalog once the snapshot is stored.
type CatalogRefreshed struct {
	Snapshot catalog.Snapshot
	Err      error
}

// GetStatuses asks for the live status of every configured connection.
type GetStatuses struct {
	Reply reply.To[[]session.Status]
}

// Internal messages.
type (
	refreshListed struct {
		req    RefreshCatalog
		result session.CatalogListed
	}
)

// Options configure the supervisor.
type Options struct {
	Session session.Options
	// PanicLimit panics of one session actor within PanicWindow mark the
	// connection degraded for Cooldown; calls fail fast meanwhile.
	PanicLimit  int
	PanicWindow time.Duration
	Cooldown    time.Duration
	// AuthHash digests a connection's auth record for its session
	// fingerprint, so that a changed record means a fresh session on the
	// next reconcile; nil leaves auth records out of fingerprints.
	AuthHash AuthHash
}

// DefaultOptions are the production settings.
func DefaultOptions() Options {
	return Options{Session: session.DefaultOptions(), PanicLimit: 3, PanicWindow: time.Minute, Cooldown: 30 * time.Second}
}

type child struct {
	pid           *actor.PID
	made          *transports // what the live incarnation's transports started
	spawned       int         // session actors spawned so far; names each incarnation
	panics        []time.Time
	degradedUntil time.Time
}

// Actor is the supervisor.
type Actor struct {
	conns map[string]config.Connection
	// fingerprints are the session fingerprints of conns, by id.
	fingerprints map[string]string
	order        []string
	factory      session.TransportFactory
	catalogs     store.Catalogs
	opts         Options

	engine   *actor.Engine
	self     *actor.PID
	children map[string]*child
	statuses map[string]session.Status
}

// New returns a producer of the supervisor for conns. It fingerprints
// them here, on the caller's goroutine, looking auth records up with
// opts.AuthHash.
func New(conns []config.Connection, factory session.TransportFactory, catalogs store.Catalogs, opts Options) actor.Producer {
	fps := fingerprints(context.Background(), conns, opts.AuthHash)
	return func() actor.Receiver {
		a := &Actor{
			conns: map[string]config.Connection{}, fingerprints: map[string]string{}, factory: factory, catalogs: catalogs, opts: opts,
			children: map[string]*child{}, statuses: map[string]session.Status{},
		}
		for _, c := range conns {
			a.conns[c.ID] = c
			a.fingerprints[c.ID] = fps[c.ID]
			a.order = append(a.order, c.ID)
			a.statuses[c.ID] = session.Status{Connection: c.ID, State: session.StateIdle}
		}
		return a
	}
}

// Receive handles one message.
func (a *Actor) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case actor.Started:
		a.engine, a.self = c.Engine(), c.PID()
	case session.CallTool:
		pid, err := a.session(c, m.Connection)
		if err != nil {
			m.Reply(session.ToolResult{CorrelationID: m.CorrelationID, Err: err})
			return
		}
		c.Send(pid, m)
	case session.ReadResource:
		pid, err := a.session(c, m.Connection)
		if err != nil {
			m.Reply(session.ToolResult{CorrelationID: m.CorrelationID, Err: err})
			return
		}
		c.Send(pid, m)
	case session.CancelCalls:
		// Only a live session can have the owner's calls; none is spawned.
		if ch := a.children[m.Connection]; ch != nil && ch.pid != nil {
			c.Send(ch.pid, m)
		}
	case RefreshCatalog:
		a.refresh(c, m)
	case refreshListed:
		a.storeSnapshot(m.result, m.req.Reply)
	case session.CatalogListed:
		// The server announced changed tools; the session re-listed them.
		a.storeSnapshot(m, nil)
	case session.Status:
		// Only the live session actor of a connection reports its status; a
		// stopping one (after a panic) must not overwrite its successor's.
		if ch := a.children[m.Connection]; ch != nil && ch.pid != nil && ch.pid.Equals(c.Sender()) {
			a.statuses[m.Connection] = m
		}
	case GetStatuses:
		out := make([]session.Status, 0, len(a.order))
		for _, id := range a.order {
			out = append(out, a.statuses[id])
		}
		m.Reply(out)
	case Reconcile:
		a.reconcile(c, m)
	case reconciled:
		a.finishReconcile(c, m)
	case guard.Panic:
		a.onPanic(m)
	case actor.Stopped:
		// hollywood stopped every child before this; end what their stdio
		// servers may have left behind.
		for _, ch := range a.children {
			ch.made.kill()
		}
	}
}

// session returns the session actor of id, spawning it on first use.
func (a *Actor) session(c *actor.Context, id string) (*actor.PID, error) {
	conn, ok := a.conns[id]
	switch {
	case !ok:
		return nil, fmt.Errorf("unknown connection %q", id)
	case !conn.IsEnabled():
		return nil, fmt.Errorf("connection %q is disabled", id)
	}
	ch := a.children[id]
	if ch != nil && time.Now().Before(ch.degradedUntil) {
		return nil, fmt.Errorf("connection %q: %w: degraded after repeated failures, retry after %s", id, session.ErrUnavailable, ch.degradedUntil.Format(time.RFC3339))
	}
	if ch == nil {
		ch = &child{}
		a.children[id] = ch
	}
	if ch.pid == nil {
		// Each incarnation gets its own actor id: a panicked predecessor
		// may still be registered while it stops, and hollywood silently
		// refuses to spawn a duplicate id (messages would reach the dying
		// actor, then nobody).
		ch.spawned++
		childID := id
		if ch.spawned > 1 {
			childID = fmt.Sprintf("%s#%d", id, ch.spawned)
		}
		engine, self := a.engine, a.self
		ch.made = &transports{inner: a.factory}
		ch.pid = c.SpawnChild(session.New(conn, ch.made, a.opts.Session), "session",
			actor.WithID(childID),
			actor.WithInboxSize(256),
			actor.WithMiddleware(guard.Recover(func(p guard.Panic) { engine.Send(self, p) })))
	}
	return ch.pid, nil
}

func (a *Actor) refresh(c *actor.Context, m RefreshCatalog) {
	pid, err := a.session(c, m.Connection)
	if err != nil {
		if m.Reply != nil {
			m.Reply(CatalogRefreshed{Err: err})
		}
		return
	}
	engine, self := a.engine, a.self
	c.Send(pid, session.ListCatalog{Deadline: m.Deadline, Reply: func(r session.CatalogListed) {
		engine.Send(self, refreshListed{req: m, result: r})
	}})
}

// storeSnapshot saves a listed catalog off the inbox and then answers.
func (a *Actor) storeSnapshot(listed session.CatalogListed, answer reply.To[CatalogRefreshed]) {
	catalogs := a.catalogs
	go func() {
		err := listed.Err
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err = catalogs.SaveCatalog(ctx, listed.Snapshot)
			cancel()
			if err != nil {
				err = fmt.Errorf("save catalog of %q: %w", listed.Snapshot.ConnectionID, err)
			}
		}
		if err != nil {
			slog.Warn("catalog refresh failed", "err", err)
		} else {
			slog.Info("catalog refreshed", "connection", listed.Snapshot.ConnectionID, "tools", len(listed.Snapshot.Tools))
		}
		if answer != nil {
			answer(CatalogRefreshed{Snapshot: listed.Snapshot, Err: err})
		}
	}()
}

// onPanic applies the restart policy: the panicking session actor is
// stopped (closing its upstream session, ending its process group) and
// respawned on next use; too many panics in a window degrade the
// connection for a cooldown.
func (a *Actor) onPanic(p guard.Panic) {
	for id, ch := range a.children {
		if ch.pid == nil || !ch.pid.Equals(p.PID) {
			continue
		}
		now := time.Now()
		recent := ch.panics[:0]
		for _, t := range ch.panics {
			if now.Sub(t) < a.opts.PanicWindow {
				recent = append(recent, t)
			}
		}
		ch.panics = append(recent, now)
		if s, ok := a.stopChild(id); ok {
			a.awaitStops([]stopping{s}, nil)
		}
		st := a.statuses[id]
		st.State, st.LastError, st.ChangedAt = session.StateIdle, p.Error(), now
		if len(ch.panics) >= a.opts.PanicLimit {
			ch.degradedUntil = now.Add(a.opts.Cooldown)
			st.State = session.StateBackoff
			slog.Error("connection degraded", "connection", id, "panics", len(ch.panics), "until", ch.degradedUntil)
		}
		a.statuses[id] = st
		return
	}
}
