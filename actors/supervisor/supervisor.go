// Package supervisor owns the supervisor actor: it spawns one session actor
// per MCP source connection on first use, routes tool calls and catalog
// refreshes to it, stores catalog snapshots, keeps each connection's status,
// opens sessions of their own for the deployments and runs whose bindings
// ask for them (scope.go), reconciles its set of connections when the
// source registry is applied (starting, stopping and replacing session
// actors), and applies mcpflow's own restart policy when a session actor
// panics (hollywood's is never reached: every actor runs behind package
// guard's recover). It stores the catalogs its sessions list a bounded
// number at a time (saver.go), measures the process's starvation for the
// sessions' keepalive (session.StallMonitor), and a Refresher lists
// catalogs through it in the background, a bounded number at a time.
// Each connection's counters (session generation, sessions opened,
// restarts) and restart window outlive its session actors: a successor
// continues from its predecessor's last status.
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
// stores the snapshot. Reply is answered with a CatalogRefreshed.
type RefreshCatalog struct {
	Connection string
	Deadline   time.Time
	Reply      reply.Address
	// Hops counts the nodes that passed the message on (see
	// session.CallTool).
	Hops int
}

// CatalogRefreshed answers RefreshCatalog once the snapshot is stored.
type CatalogRefreshed struct {
	CorrelationID uint64
	Snapshot      catalog.Snapshot
	Error         *reply.Failure
}

// Correlation implements reply.Answer.
func (m CatalogRefreshed) Correlation() uint64 { return m.CorrelationID }

// GetStatuses asks for the live status of every configured connection.
// Reply is answered with Statuses.
type GetStatuses struct {
	Reply reply.Address
}

// Statuses answers GetStatuses: one status per configured connection, in
// the order they were configured.
type Statuses struct {
	CorrelationID uint64
	Connections   []session.Status
}

// Correlation implements reply.Answer.
func (m Statuses) Correlation() uint64 { return m.CorrelationID }

// Internal messages.
type (
	// probeDue respawns a connection degraded by panics, as a probe.
	probeDue struct {
		connection string
		token      int
	}
)

// Admin event kinds the supervisor records.
const (
	EventConnectionDegraded  = "connection_degraded"
	EventConnectionRecovered = "connection_recovered"
	// EventSessionReplaced: a new upstream session replaced the previous
	// one of a connection (or of a session scope on it): whatever the
	// server kept for the previous session is gone.
	EventSessionReplaced = "session_replaced"
)

// sessionInbox is the initial room of a session actor's inbox. An idle
// session's inbox is empty, and hollywood's ring buffer doubles whenever
// it fills, so a small start costs a busy session a few copies and saves
// every idle one the 6 KiB that 256 slots take (10,000 idle sessions: 60
// MB).
const sessionInbox = 16

// statusTimeout bounds the wait for a session actor's live status; one
// that does not answer in time is shown as it last reported.
const statusTimeout = 500 * time.Millisecond

// Options configure the supervisor.
type Options struct {
	// Session bounds every session actor; its Policy is the default
	// supervision policy of every connection, which a connection's own
	// config (Connection.Supervision) overrides field by field.
	Session session.Options
	// MaxConcurrentConnects bounds the connects in progress across every
	// connection, so that many failing together do not reconnect in a
	// storm; 0 does not bound them.
	MaxConcurrentConnects int
	// Clock times the panic policy (and, unless Session.Clock is set,
	// the session actors); nil is the wall clock.
	Clock session.Clock
	// Events records admin events (a connection degraded or recovered);
	// nil records none.
	Events store.Events
	// AuthHash digests a connection's auth record for its session
	// fingerprint, so that a changed record means a fresh session on the
	// next reconcile; nil leaves auth records out of fingerprints.
	AuthHash AuthHash
	// MaxRunSessions caps the per-run sessions open at once, across
	// every connection; 0 is DefaultMaxRunSessions.
	MaxRunSessions int
	// MaxConcurrentRefreshes bounds the catalogs a Refresher lists at
	// once; 0 is DefaultRefreshConcurrency.
	MaxConcurrentRefreshes int
	// Placement places each connection's shared session on one node of
	// a cluster; nil on one node.
	Placement Placement
}

// DefaultOptions are the production settings.
func DefaultOptions() Options {
	return Options{Session: session.DefaultOptions(), MaxConcurrentConnects: 8, MaxRunSessions: DefaultMaxRunSessions}
}

type child struct {
	pid     *actor.PID
	made    *transports // what the live incarnation's transports started
	spawned int         // session actors spawned so far; names each incarnation
	// panics are the session actor's recent crashes; past the policy's
	// limit (see panicLimit) the connection is degraded here, with no
	// session actor, until probeDue.
	panics     *session.Intensity
	degraded   bool
	probe      session.Timer
	probeToken int
}

// Actor is the supervisor.
type Actor struct {
	conns map[string]config.Connection
	// fingerprints are the session fingerprints of conns, by id.
	fingerprints map[string]string
	order        []string
	factory      session.TransportFactory
	catalogs     store.Catalogs
	// saver stores the listed catalogs, one at a time, off the inbox.
	saver *saver
	// stalls measures the process's starvation for the sessions' pings
	// (nil when Options.Session brings its own meter).
	stalls *session.StallMonitor
	opts   Options

	engine   *actor.Engine
	self     *actor.PID
	clock    session.Clock
	limiter  *session.Limiter
	children map[string]*child
	// statuses are each connection's last reported status: what
	// GetStatuses shows when no session actor answers, and what a new
	// session actor continues from.
	statuses map[string]session.Status
	// scoped are the session actors of deployment and run scopes (see
	// scope.go); scopedSpawned numbers their actor ids.
	scoped        map[scopeKey]*scopedChild
	scopedSpawned int
	// replies delivers the session actors' live statuses to getStatuses.
	replies *reply.Router
	// refreshing are the refreshes whose listing a session actor owes,
	// by the correlation id of their ListCatalog; lastRefresh numbers
	// them.
	refreshing  map[uint64]RefreshCatalog
	lastRefresh uint64
	// In a cluster (Options.Placement): tenures are this node's
	// tenures of the connections it owns, owners the other nodes known
	// to own connections, and placing the placements in progress
	// (numbered by lastPlacing) with the messages that wait for them.
	tenures     map[string]session.Tenure
	owners      map[string]remoteOwner
	placing     map[string]*placing
	lastPlacing uint64
	// forwarded are the calls in flight passed to each other node.
	forwarded map[string][]passed
	// lines are the callers' direct lines to the shared session actors
	// (lines.go): opened at each spawn, closed before each stop.
	lines *Lines
}

// New returns a producer of the supervisor for conns, which waits for
// answers through replies and opens lines to its session actors (nil
// opens none). It fingerprints them here, on the caller's goroutine,
// looking auth records up with opts.AuthHash.
func New(conns []config.Connection, factory session.TransportFactory, catalogs store.Catalogs, replies *reply.Router, lines *Lines, opts Options) actor.Producer {
	fps := fingerprints(context.Background(), conns, opts.AuthHash)
	return func() actor.Receiver {
		a := &Actor{
			conns: map[string]config.Connection{}, fingerprints: map[string]string{}, factory: factory, catalogs: catalogs, opts: opts,
			children: map[string]*child{}, statuses: map[string]session.Status{}, scoped: map[scopeKey]*scopedChild{},
			clock: opts.Clock, replies: replies, refreshing: map[uint64]RefreshCatalog{},
			tenures: map[string]session.Tenure{}, owners: map[string]remoteOwner{}, placing: map[string]*placing{},
			forwarded: map[string][]passed{}, lines: lines,
		}
		if a.clock == nil {
			a.clock = session.SystemClock()
		}
		if opts.MaxConcurrentConnects > 0 {
			a.limiter = session.NewLimiter(opts.MaxConcurrentConnects)
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
func (a *Actor) Receive(c *actor.Context) { a.handle(c, c.Message()) }

// handle handles msg: the message received, or one that waited for its
// connection to be placed.
func (a *Actor) handle(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case actor.Started:
		a.engine, a.self = c.Engine(), c.PID()
		a.saver = newSaver(a.engine, a.catalogs, a.clock)
		a.saver.start()
		if a.opts.Session.Stalls == nil {
			a.stalls = session.NewStallMonitor()
			a.stalls.Start()
		}
	case session.CallTool:
		if m.Scope == "" && a.routed(c, m.Connection, m) {
			return
		}
		pid, err := a.route(c, m.Connection, m.Scope)
		if err != nil {
			reply.Send(a.engine, m.Reply, session.ToolResult{CorrelationID: m.Reply.Correlation, Error: reply.Fail(err)})
			return
		}
		c.Send(pid, m)
	case session.ReadResource:
		a.toSession(c, m.Connection, m.Scope, m.Reply, m)
	case session.GetPrompt:
		a.toSession(c, m.Connection, m.Scope, m.Reply, m)
	case session.Complete:
		a.toSession(c, m.Connection, m.Scope, m.Reply, m)
	case session.CancelCalls:
		// Only a live session can have the owner's calls.
		a.toLive(c, m.Connection, m.Scope, m)
	case session.AnswerUpstream:
		// Goes where the request came from, as a cancel does: only a
		// live session waits for it.
		a.toLive(c, m.Connection, m.Scope, m)
	case ReleaseScope:
		a.releaseScope(m)
	case RefreshCatalog:
		if !a.routed(c, m.Connection, m) {
			a.refresh(c, m)
		}
	case CatalogRefreshed:
		a.onRefreshed(m)
	case placed:
		a.onPlaced(c, m)
	case TenureEnded:
		a.onTenureEnded(m)
	case NodeLeft:
		a.onNodeLeft(m)
	case session.CatalogListed:
		a.onListed(m)
	case session.Status:
		// Only the live session actor of a connection reports its status; a
		// stopping one (after a panic) must not overwrite its successor's.
		if ch := a.children[m.Connection]; ch != nil && ch.pid != nil && ch.pid.Equals(c.Sender()) {
			a.setStatus(m)
		} else if k, ok := a.scopedOf(c.Sender()); ok {
			// Scoped sessions are not in the connection's status.
			slog.Debug("scoped session status", "connection", k.connection, "scope", k.scope, "state", m.State, "generation", m.Generation)
		}
	case session.Replaced:
		a.onReplaced(c, m)
	case GetStatuses:
		a.getStatuses(m)
	case Reconcile:
		a.reconcile(c, m)
	case reconciled:
		a.finishReconcile(c, m)
	case guard.Panic:
		if !a.onScopedPanic(m) {
			a.onPanic(c, m)
		}
	case probeDue:
		a.onProbeDue(c, m)
	case actor.Stopped:
		a.saver.stop()
		a.stalls.Stop()
		// hollywood stopped every child before this; end what their stdio
		// servers may have left behind.
		for _, ch := range a.children {
			if ch.probe != nil {
				ch.probe.Stop()
			}
			ch.made.kill()
		}
		for _, ch := range a.scoped {
			ch.made.kill()
		}
	}
}

// setStatus keeps st as its connection's status and records an admin event
// when the connection becomes degraded or recovers.
func (a *Actor) setStatus(st session.Status) {
	prev := a.statuses[st.Connection]
	a.statuses[st.Connection] = st
	switch {
	case st.State == session.StateDegraded && prev.State != session.StateDegraded:
		p := a.sessionOptions(a.conns[st.Connection]).Policy
		a.event(EventConnectionDegraded, st, map[string]any{
			"max_restarts": p.MaxRestarts, "restart_window_ms": p.RestartWindow.Milliseconds(), "proved_after_ms": p.ProvedAfter.Milliseconds(),
			"probe_interval_ms": p.ProbeInterval.Milliseconds(),
		})
	case prev.State == session.StateDegraded && st.State == session.StateOpen:
		a.event(EventConnectionRecovered, st, nil)
	}
}

// onReplaced records that a session actor's new session replaced its
// previous one: session_replaced, with the generations, the cause (its
// kind, error, and a stdio server's exit status and stderr tail, redacted

// toLive sends m to the session actor of connection (in scope, "" for
// the shared session) when one lives, here or on the node that owns the
// connection; none is spawned for it.
func (a *Actor) toLive(c *actor.Context, connection, scope string, m any) {
	switch {
	case scope != "":
		if pid := a.scopedFor(connection, scope); pid != nil {
			c.Send(pid, m)
		}
	case a.routed(c, connection, m):
	default:
		if ch := a.children[connection]; ch != nil && ch.pid != nil {
			c.Send(ch.pid, m)
		}
	}
}

// and bounded by the session actor) and, for a scoped session, its scope.
func (a *Actor) onReplaced(c *actor.Context, m session.Replaced) {
	if a.opts.Events == nil {
		return
	}
	payload := map[string]any{"old_generation": m.Previous, "new_generation": m.Generation, "cause": m.Cause.Kind}
	for k, v := range map[string]string{"error": m.Cause.Error, "exit_status": m.Cause.ExitStatus, "stderr_tail": m.Cause.Stderr} {
		if v != "" {
			payload[k] = v
		}
	}
	if k, ok := a.scopedOf(c.Sender()); ok {
		payload["scope"] = k.scope
	}
	a.record(EventSessionReplaced, m.Connection, payload)
}

// event records an admin event about st's connection, off the inbox.
// Whoever degraded the connection, or saw it recover, logged it: the
// session actor, or onPanic.
func (a *Actor) event(kind string, st session.Status, extra map[string]any) {
	if a.opts.Events == nil {
		return
	}
	payload := map[string]any{"state": string(st.State), "restarts": st.Restarts, "session_generation": st.Generation}
	if st.LastError != "" {
		payload["last_error"] = st.LastError // redacted by the session actor
	}
	for k, v := range extra {
		payload[k] = v
	}
	a.record(kind, st.Connection, payload)
}

// record appends an admin event about connection id, off the inbox.
func (a *Actor) record(kind, id string, payload map[string]any) {
	ev := store.Event{Kind: kind, TimestampEpochMs: a.clock.Now().UnixMilli(), ConnectionID: &id, Payload: payload}
	events := a.opts.Events
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := events.AppendEvent(ctx, ev); err != nil {
			slog.Warn("admin event not recorded", "kind", kind, "err", err)
		}
	}()
}

// getStatuses answers with every connection's status: the live one of each
// session actor (asked off the inbox, each within statusTimeout), else the
// last one known.
func (a *Actor) getStatuses(m GetStatuses) {
	type row struct {
		status session.Status
		pid    *actor.PID
	}
	rows := make([]row, 0, len(a.order))
	for _, id := range a.order {
		st, ok := a.statuses[id]
		if !ok || st.Connection == "" {
			st = session.Status{Connection: id, State: session.StateIdle}
		}
		r := row{status: st}
		if ch := a.children[id]; ch != nil && ch.pid != nil {
			r.pid = ch.pid
		} else if conn, ok := a.conns[id]; ok && !conn.IsEnabled() {
			r.status.State = session.StateClosed
		}
		rows = append(rows, r)
	}
	engine, replies := a.engine, a.replies
	go func() {
		waiters := make([]*reply.Expected[session.CurrentStatus], len(rows))
		for i, r := range rows {
			if r.pid != nil {
				waiters[i] = reply.Expect[session.CurrentStatus](replies)
				defer waiters[i].Close()
				engine.Send(r.pid, session.GetStatus{Reply: waiters[i].To()})
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
		defer cancel()
		out := make([]session.Status, len(rows))
		for i, r := range rows {
			out[i] = r.status
			if waiters[i] != nil {
				if live, err := waiters[i].Wait(ctx); err == nil {
					out[i] = live.Status
				}
			}
		}
		reply.Send(engine, m.Reply, Statuses{CorrelationID: m.Reply.Correlation, Connections: out})
	}()
}

// sessionOptions are the options of conn's session actors: the policy and
// keepalive its config sets over the default, the shared connect limiter
// and starvation meter, and the clock.
func (a *Actor) sessionOptions(conn config.Connection) session.Options {
	o := SessionFor(a.opts.Session, conn.Supervision)
	o.Limiter = a.limiter
	if a.stalls != nil {
		o.Stalls = a.stalls
	}
	if o.Clock == nil {
		o.Clock = a.opts.Clock
	}
	return o
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
	if ch != nil && ch.degraded {
		st := a.statuses[id]
		return nil, fmt.Errorf("connection %q: %w: its session actor crashed %d times; calls fail fast until a probe at %s; last error: %s",
			id, session.ErrDegraded, len(ch.panics.Recent(a.clock.Now())), st.NextAttemptAt.Format(time.RFC3339), st.LastError)
	}
	if ch == nil || ch.pid == nil {
		a.spawn(c, id, session.Incarnation{Previous: a.statuses[id]})
		ch = a.children[id]
	}
	return ch.pid, nil
}

// spawn starts a session actor for id that continues as inc says.
func (a *Actor) spawn(c *actor.Context, id string, inc session.Incarnation) {
	ch := a.children[id]
	if ch == nil {
		ch = &child{}
		a.children[id] = ch
	}
	conn := a.conns[id]
	// Each incarnation gets its own actor id: a panicked predecessor may
	// still be registered while it stops, and hollywood silently refuses
	// to spawn a duplicate id (messages would reach the dying actor, then
	// nobody).
	ch.spawned++
	childID := id
	if ch.spawned > 1 {
		childID = fmt.Sprintf("%s#%d", id, ch.spawned)
	}
	engine, self, lines := a.engine, a.self, a.lines
	ch.made = &transports{inner: a.factory}
	opts := a.sessionOptions(conn)
	opts.Tenure = a.tenures[id]
	report := func(p guard.Panic) { lines.bar(id, p.PID); engine.Send(self, p) }
	ch.pid = c.SpawnChild(guard.Producer(session.Continue(conn, ch.made, opts, inc), report), "session",
		actor.WithID(childID),
		actor.WithInboxSize(sessionInbox))
	a.lines.open(id, ch.pid, opts.Tenure)
}

// refreshGrace is how long past its deadline a refresh waits for the
// listing its session actor owes before it is forgotten (a session actor
// stopped as it was asked never answers; its asker has given up by then).
const refreshGrace = time.Minute

// forgetStaleRefreshes forgets the refreshes whose answer is past its
// deadline and grace.
func (a *Actor) forgetStaleRefreshes() {
	now := a.clock.Now()
	for id, r := range a.refreshing {
		if now.After(r.Deadline.Add(refreshGrace)) {
			delete(a.refreshing, id)
		}
	}
}

// refresh asks the connection's session actor for a listing, answered to
// the supervisor itself with the refresh's own correlation id.
func (a *Actor) refresh(c *actor.Context, m RefreshCatalog) {
	pid, err := a.session(c, m.Connection)
	if err != nil {
		reply.Send(a.engine, m.Reply, CatalogRefreshed{CorrelationID: m.Reply.Correlation, Error: reply.Fail(err)})
		return
	}
	a.forgetStaleRefreshes()
	a.lastRefresh++
	a.refreshing[a.lastRefresh] = m
	c.Send(pid, session.ListCatalog{Deadline: m.Deadline, Reply: reply.At(a.self, a.lastRefresh)})
}

// onListed stores a listing: the answer to a refresh, or one nobody asked
// for (the server announced changed tools, or a reconcile warmed the
// connection).
func (a *Actor) onListed(m session.CatalogListed) {
	var answer reply.Address
	if m.CorrelationID != 0 {
		req, ok := a.refreshing[m.CorrelationID]
		if !ok {
			return // forgotten: its asker gave up long ago
		}
		delete(a.refreshing, m.CorrelationID)
		answer = req.Reply
	}
	a.storeSnapshot(m, answer)
}

// storeSnapshot hands a listed catalog to the saver, which answers once
// it is stored; a listing that failed is answered at once. Whoever asked
// for it reports the failure (the refresher logs it once), so it is only
// a debug line here.
func (a *Actor) storeSnapshot(listed session.CatalogListed, answer reply.Address) {
	if listed.Error != nil {
		slog.Debug("catalog refresh failed", "err", listed.Error.Message)
		reply.Send(a.engine, answer, CatalogRefreshed{CorrelationID: answer.Correlation, Error: listed.Error})
		return
	}
	a.saver.save(listed.Snapshot, answer)
}

// onPanic applies the restart policy to a crashed session actor: it is
// stopped (closing its upstream session, ending its process group) and a
// successor continues from its last status, reopening the session after a
// backoff, or degrading the connection when the policy's restart limit is
// reached (the successor counts the crash as a restart). A connection
// whose session actors keep crashing beyond that (panicLimit) gets no
// successor until a probe, ProbeInterval later: calls fail fast here.
func (a *Actor) onPanic(c *actor.Context, p guard.Panic) {
	for id, ch := range a.children {
		if ch.pid == nil || !ch.pid.Equals(p.PID) {
			continue
		}
		now := a.clock.Now()
		policy := a.sessionOptions(a.conns[id]).Policy
		if ch.panics == nil {
			ch.panics = session.NewIntensity(session.Policy{MaxRestarts: panicLimit(policy), RestartWindow: policy.RestartWindow}, nil)
		}
		if s, ok := a.stopChild(id); ok {
			a.awaitStops([]stopping{s}, nil, time.Time{})
		}
		cause := "session actor panicked: " + p.Error()
		a.opts.Session.Metrics.Restart(id)
		prev := a.statuses[id]
		if !ch.panics.Allow(now) {
			slog.Error("connection degraded: its session actor keeps crashing", "connection", id, "crashes", panicLimit(policy), "window", policy.RestartWindow, "err", cause)
			ch.degraded = true
			ch.probeToken++
			st := prev
			st.Connection, st.State, st.LastError, st.LastErrorAt = id, session.StateDegraded, cause, now
			st.CallsInFlight, st.CallsQueued, st.ChangedAt = 0, 0, now
			st.Restarts++
			st.NextAttemptAt = now.Add(policy.ProbeInterval)
			a.setStatus(st)
			engine, self, msg := a.engine, a.self, probeDue{connection: id, token: ch.probeToken}
			ch.probe = a.clock.AfterFunc(policy.ProbeInterval, func() { engine.Send(self, msg) })
			return
		}
		a.spawn(c, id, session.Incarnation{Previous: prev, Restart: true, Cause: cause})
		return
	}
}

// panicLimit is how many session actor crashes within the policy's window
// the supervisor replaces at once: one more than the session restarts the
// policy allows (so the session's own limit degrades first), or 10 when
// the policy never degrades.
func panicLimit(p session.Policy) int {
	if p.MaxRestarts == 0 {
		return 10
	}
	return p.MaxRestarts + 1
}

// onProbeDue respawns a connection degraded by crashes, as a probe: the
// session actor starts degraded and connects at once.
func (a *Actor) onProbeDue(c *actor.Context, m probeDue) {
	ch := a.children[m.connection]
	if ch == nil || !ch.degraded || ch.probeToken != m.token {
		return
	}
	if conn, ok := a.conns[m.connection]; !ok || !conn.IsEnabled() {
		return
	}
	ch.degraded = false
	st := a.statuses[m.connection]
	a.spawn(c, m.connection, session.Incarnation{Previous: st, Probe: true, Cause: st.LastError})
}
