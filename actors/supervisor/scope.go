package supervisor

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcpflow/mcpflow/actors/guard"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/session"
)

// Session scopes. By default every run of every deployment that binds a
// connection shares its one session (scope ""); a deployment binding may
// instead ask for a session per deployment or per run, and a connection
// exposed through the MCP face per_client gives each downstream client
// session its own. A scoped session
// is keyed by the connection, its session fingerprint (transport and
// credential) and the scope, so two scopes never share upstream state.
const (
	scopeDeployment = "deployment:"
	scopeRun        = "run:"
	scopeClient     = "client:"
)

// DeploymentScope is the scope of the sessions every run of deployment id
// shares.
func DeploymentScope(id string) string { return scopeDeployment + id }

// RunScope is the scope of the sessions of run id alone.
func RunScope(id string) string { return scopeRun + id }

// IsRunScope reports whether scope is a run's.
func IsRunScope(scope string) bool { return strings.HasPrefix(scope, scopeRun) }

// ClientScope is the scope of the sessions of downstream MCP client
// session key (runs.PassthroughRequest.ClientSession).
func ClientScope(key string) string { return scopeClient + key }

// shortLived reports whether scope's sessions end with their owner, a
// run or a client session: those MaxRunSessions caps.
func shortLived(scope string) bool {
	return IsRunScope(scope) || strings.HasPrefix(scope, scopeClient)
}

// DefaultMaxRunSessions caps the per-run and per-client sessions open at
// once, across every connection.
const DefaultMaxRunSessions = 32

// ReleaseScope stops every session of Scope (a run's that ended, a
// deployment's that was deleted): each closes its upstream session, and
// the process groups of its stdio servers are ended. A scope with no
// session is nothing to do. Plain data: anyone may send it.
type ReleaseScope struct {
	Scope string
}

// scopeKey identifies a scoped session: the connection, its session
// fingerprint (transport, auth_ref and the auth record's digest) and the
// scope.
type scopeKey struct {
	connection, fingerprint, scope string
}

// scopedChild is the session actor of one scope of a connection. It has
// no restart policy of its own beyond the session actor's: a crash stops
// it, and the scope's next call opens a fresh one.
type scopedChild struct {
	pid  *actor.PID
	made *transports
}

// scopedKind is the actor kind of scoped session actors: their ids live
// under "<supervisor>/scoped/", apart from the shared ones' "session/".
const scopedKind = "scoped"

// toSession hands m, a request answered with a session.ToolResult (a
// resource read, a prompt), to the session actor of connection id and
// scope: another node's when it owns the connection (routed), else this
// node's; a connection it cannot route to answers to at once.
func (a *Actor) toSession(c *actor.Context, id, scope string, to reply.Address, m any) {
	if scope == "" && a.routed(c, id, m) {
		return
	}
	pid, err := a.route(c, id, scope)
	if err != nil {
		reply.Send(a.engine, to, session.ToolResult{CorrelationID: to.Correlation, Error: reply.Fail(err)})
		return
	}
	c.Send(pid, m)
}

// route returns the session actor a call of scope on connection id goes
// to: the shared one for "", else the scope's own.
func (a *Actor) route(c *actor.Context, id, scope string) (*actor.PID, error) {
	if scope == "" {
		return a.session(c, id)
	}
	return a.scopedSession(c, id, scope)
}

// scopedSession returns the session actor of scope on connection id,
// spawning it on first use with the shared one's options, policy and
// recover middleware. A run's or a client's new session is refused,
// wrapping session.ErrOverloaded, while MaxRunSessions are open.
func (a *Actor) scopedSession(c *actor.Context, id, scope string) (*actor.PID, error) {
	conn, ok := a.conns[id]
	switch {
	case !ok:
		return nil, fmt.Errorf("unknown connection %q", id)
	case !conn.IsEnabled():
		return nil, fmt.Errorf("connection %q is disabled", id)
	}
	key := scopeKey{connection: id, fingerprint: a.fingerprints[id], scope: scope}
	if ch := a.scoped[key]; ch != nil {
		return ch.pid, nil
	}
	if shortLived(scope) {
		limit := a.maxRunSessions()
		if n := a.runSessions(); n >= limit {
			return nil, fmt.Errorf("connection %q, %s: %w: %d per-run and per-client sessions are open, the cap (max_run_sessions %d); a run's sessions close when it ends, an MCP client's when its session does",
				id, scope, session.ErrOverloaded, n, limit)
		}
	}
	a.scopedSpawned++
	opts := a.sessionOptions(conn)
	// The shared session keeps the connection's catalog fresh; a scoped
	// one lists it only when its server announces a change.
	opts.CatalogMaxAge = 0
	engine, self := a.engine, a.self
	ch := &scopedChild{made: &transports{inner: a.factory}}
	report := func(p guard.Panic) { engine.Send(self, p) }
	made := session.Continue(conn, ch.made, opts, session.Incarnation{Previous: session.Status{Connection: id}})
	ch.pid = c.SpawnChild(guard.Producer(made, report), scopedKind,
		actor.WithID(fmt.Sprintf("%s@%s#%d", id, scope, a.scopedSpawned)),
		actor.WithInboxSize(sessionInbox))
	a.scoped[key] = ch
	slog.Debug("scoped session started", "connection", id, "scope", scope, "actor", ch.pid.ID, "run_sessions", a.runSessions())
	return ch.pid, nil
}

// maxRunSessions is the cap on open per-run sessions.
func (a *Actor) maxRunSessions() int {
	if a.opts.MaxRunSessions > 0 {
		return a.opts.MaxRunSessions
	}
	return DefaultMaxRunSessions
}

// runSessions counts the per-run and per-client sessions open now.
func (a *Actor) runSessions() int {
	n := 0
	for k := range a.scoped {
		if shortLived(k.scope) {
			n++
		}
	}
	return n
}

// scopedFor returns the session actor of scope on connection id, if one
// is open.
func (a *Actor) scopedFor(id, scope string) *actor.PID {
	if ch := a.scoped[scopeKey{connection: id, fingerprint: a.fingerprints[id], scope: scope}]; ch != nil {
		return ch.pid
	}
	return nil
}

// stopScoped stops every scoped session actor match accepts; the caller
// waits on what it returns (off the inbox) and then ends the process
// groups (awaitStops).
func (a *Actor) stopScoped(match func(scopeKey) bool) []stopping {
	var stops []stopping
	for k, ch := range a.scoped {
		if !match(k) {
			continue
		}
		stops = append(stops, stopping{done: a.engine.Poison(ch.pid), made: ch.made})
		delete(a.scoped, k)
		slog.Debug("scoped session stopped", "connection", k.connection, "scope", k.scope, "actor", ch.pid.ID)
	}
	return stops
}

// releaseScope stops every session of m.Scope.
func (a *Actor) releaseScope(m ReleaseScope) {
	if stops := a.stopScoped(func(k scopeKey) bool { return k.scope == m.Scope }); len(stops) > 0 {
		a.awaitStops(stops, nil, time.Time{})
	}
}

// scopedOf finds the scoped session actor pid is, if any.
func (a *Actor) scopedOf(pid *actor.PID) (scopeKey, bool) {
	if pid == nil {
		return scopeKey{}, false
	}
	for k, ch := range a.scoped {
		if ch.pid.Equals(pid) {
			return k, true
		}
	}
	return scopeKey{}, false
}

// onScopedPanic stops a scoped session actor that panicked; the scope's
// next call opens a fresh session. It reports whether p was one.
func (a *Actor) onScopedPanic(p guard.Panic) bool {
	k, ok := a.scopedOf(p.PID)
	if !ok {
		return false
	}
	slog.Warn("scoped session actor panicked; stopped", "connection", k.connection, "scope", k.scope, "err", p.Error())
	a.opts.Session.Metrics.Restart(k.connection)
	a.awaitStops(a.stopScoped(func(o scopeKey) bool { return o == k }), nil, time.Time{})
	return true
}
