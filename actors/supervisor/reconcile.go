package supervisor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/session"
)

// Reconcile replaces the supervisor's connections with Connections, the
// complete effective set. A new connection gets a session actor; a removed
// or disabled one has its session actor stopped (its upstream session
// closed, its stdio process group ended); one whose session fingerprint
// changed (transport, env, headers, auth_ref, auth record) gets a fresh
// session actor. The scoped sessions of a removed, disabled or changed
// connection are stopped too; its scopes open fresh ones on next use.
// New, replaced and re-enabled connections list their catalog at once,
// which the supervisor stores.
type Reconcile struct {
	Connections []config.Connection
	// Fingerprints are the session fingerprints by connection id (see
	// Fingerprint); a connection missing here is fingerprinted without
	// its auth record. Handle.Reconcile fills them.
	Fingerprints map[string]string
	// Deadline, when set, is when the answer is due: the session actors
	// the reconcile stops that are still closing KillGrace before it have
	// their peers killed then (see awaitStops). Handle.Reconcile sets it
	// from its context.
	Deadline time.Time
	// Reply is answered with Reconciled.
	Reply reply.Address
}

// Reconciled answers Reconcile once every session actor it stopped is gone
// (or its CloseTimeout and a grace period have passed) and the process
// groups of their stdio servers were killed. The lists are sorted.
type Reconciled struct {
	CorrelationID uint64
	// Registered are the ids of new connections.
	Registered []string
	// Updated are the ids of connections whose definition, enabled flag
	// or session fingerprint changed.
	Updated []string
	// Removed are the ids of connections no longer in the set.
	Removed []string
	// Replaced are the updated ids whose session fingerprint changed:
	// they get a fresh session.
	Replaced []string
	// Stopped are the ids whose live shared session actor was stopped
	// (removed, disabled or replaced); their scoped sessions, stopped
	// with it, are not listed.
	Stopped []string
}

// Correlation implements reply.Answer.
func (m Reconciled) Correlation() uint64 { return m.CorrelationID }

// AuthHash returns, by connection id, a digest of the auth record each of
// conns' sessions would bind (which record, and its content), "" when
// there is none. It is asked once for every connection of a
// fingerprinting, so that it can read every record at once (one store
// query for 10,000 sources, not 10,000). The app provides it; the
// supervisor only compares digests.
type AuthHash func(ctx context.Context, conns []config.Connection) map[string]string

// authHashTimeout bounds the auth lookups of one fingerprinting.
const authHashTimeout = 10 * time.Second

// stopGrace is how long, beyond the session's CloseTimeout, a reconcile
// waits for a stopped session actor before it kills the process groups
// anyway and answers.
const stopGrace = 2 * time.Second

// KillGrace is what a reconcile with a deadline keeps of it for killing
// the peers of the session actors still closing, and answering.
const KillGrace = time.Second

// Fingerprint digests what a connection's upstream session is made of: its
// transport (kind, command, args, env, cwd, url, headers), its auth_ref and
// authHash, the digest of its auth record's content, and the bound its
// transport puts on one answer (max_result_bytes, absent when unset, so
// that the fingerprints of connections without one did not change with
// it). Two connections with the same fingerprint can share a session; a
// change means a fresh one. Enabled, provider, account, profile and
// metadata are not part of it.
func Fingerprint(c config.Connection, authHash string) string {
	data, err := json.Marshal(struct {
		Transport      config.Transport `json:"transport"`
		AuthRef        *string          `json:"auth_ref"`
		Auth           string           `json:"auth"`
		MaxResultBytes int64            `json:"max_result_bytes,omitempty"`
	}{c.Transport, c.AuthRef, authHash, c.MaxResultBytes})
	if err != nil { // a Transport of strings and string maps always encodes
		panic("supervisor: fingerprint: " + err.Error())
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// fingerprints computes the fingerprint of every connection, looking auth
// records up with hash (none when nil), within authHashTimeout.
func fingerprints(ctx context.Context, conns []config.Connection, hash AuthHash) map[string]string {
	ctx, cancel := context.WithTimeout(ctx, authHashTimeout)
	defer cancel()
	var auths map[string]string
	if hash != nil {
		auths = hash(ctx, conns)
	}
	out := make(map[string]string, len(conns))
	for _, c := range conns {
		out[c.ID] = Fingerprint(c, auths[c.ID])
	}
	return out
}

// Internal messages of a reconcile.
type (
	// reconciled arrives once the session actors a reconcile stopped are
	// gone; the supervisor then warms the connections and answers.
	reconciled struct {
		result Reconciled
		warm   []string
		// release are the connections whose tenure this node gives up
		// (in a cluster) once their session actors are gone.
		release []string
		reply   reply.Address
	}
)

// stopping is a session actor being stopped and the transports it made.
type stopping struct {
	done context.Context
	made *transports
}

func (a *Actor) reconcile(c *actor.Context, m Reconcile) {
	next := make(map[string]config.Connection, len(m.Connections))
	for _, conn := range m.Connections {
		next[conn.ID] = conn
	}
	var (
		res     Reconciled
		stops   []stopping
		warm    []string
		release []string
	)
	stop := func(id string) {
		if s, ok := a.stopChild(id); ok {
			stops = append(stops, s)
			res.Stopped = append(res.Stopped, id)
		}
		stops = append(stops, a.stopScoped(func(k scopeKey) bool { return k.connection == id })...)
	}
	order := a.order[:0:0]
	for _, id := range a.order {
		if _, ok := next[id]; ok {
			order = append(order, id)
			continue
		}
		res.Removed = append(res.Removed, id)
		release = append(release, id)
		stop(id)
		delete(a.conns, id)
		delete(a.fingerprints, id)
		delete(a.statuses, id)
	}
	for _, conn := range m.Connections {
		id := conn.ID
		fp, ok := m.Fingerprints[id]
		if !ok {
			fp = Fingerprint(conn, "")
		}
		old, had := a.conns[id]
		switch {
		case !had:
			res.Registered = append(res.Registered, id)
			order = append(order, id)
			a.statuses[id] = session.Status{Connection: id, State: session.StateIdle, ChangedAt: a.clock.Now()}
			if !conn.IsEnabled() {
				a.setState(id, session.StateClosed)
			}
			if conn.IsEnabled() {
				warm = append(warm, id)
			}
		case a.fingerprints[id] != fp:
			res.Updated = append(res.Updated, id)
			res.Replaced = append(res.Replaced, id)
			stop(id)
			a.afresh(id) // a new definition starts afresh; its counters go on
			a.forgetError(id)
			a.setState(id, session.StateIdle)
			if conn.IsEnabled() {
				warm = append(warm, id)
			} else {
				a.setState(id, session.StateClosed)
			}
		case !reflect.DeepEqual(old, conn):
			res.Updated = append(res.Updated, id)
			switch {
			case old.IsEnabled() && !conn.IsEnabled():
				release = append(release, id)
				stop(id)
				a.afresh(id)
				a.setState(id, session.StateClosed)
			case !old.IsEnabled() && conn.IsEnabled():
				a.setState(id, session.StateIdle)
				warm = append(warm, id)
			default:
				if !reflect.DeepEqual(old.Supervision, conn.Supervision) {
					a.tellSessions(c, id, session.SetPolicy{Policy: a.sessionOptions(conn).Policy})
				}
				if !reflect.DeepEqual(old.Client, conn.Client) {
					a.tellSessions(c, id, session.SetClient{Client: conn.Client})
				}
			}
		}
		a.conns[id] = conn
		a.fingerprints[id] = fp
	}
	a.order = order
	for _, l := range [][]string{res.Registered, res.Updated, res.Removed, res.Replaced, res.Stopped} {
		slices.Sort(l)
	}
	done := reconciled{result: res, warm: warm, release: release, reply: m.Reply}
	if len(stops) == 0 {
		a.finishReconcile(c, done)
		return
	}
	a.awaitStops(stops, done, m.Deadline)
}

// tellSessions sends msg to every live session actor of connection id:
// its shared session's and its scoped ones'.
func (a *Actor) tellSessions(c *actor.Context, id string, msg any) {
	if ch := a.children[id]; ch != nil && ch.pid != nil {
		c.Send(ch.pid, msg)
	}
	for k, ch := range a.scoped {
		if k.connection == id {
			c.Send(ch.pid, msg)
		}
	}
}

// stopChild stops the live session actor of id, if any: it closes the
// actor's line, then its upstream session within CloseTimeout. The caller waits on the returned
// stopping (off the inbox) and then ends the process groups.
func (a *Actor) stopChild(id string) (stopping, bool) {
	ch := a.children[id]
	if ch == nil || ch.pid == nil {
		return stopping{}, false
	}
	pid, engine := ch.pid, a.engine
	s := stopping{done: a.lines.close(id, pid, func() context.Context { return engine.Poison(pid) }), made: ch.made}
	ch.pid, ch.made = nil, nil
	return s, true
}

// afresh forgets the restarts and crashes of id (a new or disabled
// definition): its next session actor starts with a clean restart window.
func (a *Actor) afresh(id string) {
	if ch := a.children[id]; ch != nil {
		ch.panics, ch.degraded = nil, false
		ch.probeToken++
		if ch.probe != nil {
			ch.probe.Stop()
		}
	}
	if st, ok := a.statuses[id]; ok {
		st.RecentRestarts, st.NextAttemptAt = nil, time.Time{}
		a.statuses[id] = st
	}
}

// forgetError forgets the last error of id, and the login host it named,
// when its definition changed (its transport, its auth_ref or its auth
// record, which a login changes): the error was the old definition's,
// and one that said to log in would still say so after the login. Within
// one definition the last error stays after the session recovers, as the
// record of what ended the last session or connect.
func (a *Actor) forgetError(id string) {
	if st, ok := a.statuses[id]; ok {
		st.LastError, st.LastErrorAt, st.LoginHost = "", time.Time{}, ""
		a.statuses[id] = st
	}
}

// setState records that id, with no session actor, is in state s.
func (a *Actor) setState(id string, s session.State) {
	st, ok := a.statuses[id]
	if !ok {
		st = session.Status{Connection: id}
	}
	st.State, st.CallsInFlight, st.CallsQueued, st.ChangedAt = s, 0, 0, a.clock.Now()
	a.statuses[id] = st
}

// awaitStops waits, in a goroutine bounded by CloseTimeout plus stopGrace,
// and by KillGrace before deadline when one is set, until the stopped
// session actors are gone, kills the process groups of what they started,
// and then sends then (if any) to the supervisor.
func (a *Actor) awaitStops(stops []stopping, then any, deadline time.Time) {
	engine, self := a.engine, a.self
	limit := a.opts.Session.CloseTimeout + stopGrace
	if !deadline.IsZero() {
		limit = max(0, min(limit, time.Until(deadline)-KillGrace))
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		for _, s := range stops {
			select {
			case <-s.done.Done():
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			slog.Warn("session actors still stopping; killing their process groups", "waited", limit)
		}
		for _, s := range stops {
			s.made.kill()
		}
		if then != nil {
			engine.Send(self, then)
		}
	}()
}

// finishReconcile starts, and lists the catalogs of, the connections the
// reconcile (re)started and that are still enabled, then answers.
func (a *Actor) finishReconcile(c *actor.Context, m reconciled) {
	a.release(m.release)
	for _, id := range m.warm {
		conn, ok := a.conns[id]
		if !ok || !conn.IsEnabled() || (a.opts.Placement != nil && a.tenures[id] == nil) {
			continue // in a cluster, only the owner warms a connection
		}
		pid, err := a.session(c, id)
		if err != nil {
			slog.Warn("reconcile: no session", "connection", id, "err", err)
			continue
		}
		// No reply address: the listed catalog comes back unasked, as a
		// CatalogListed, and is stored like a tools/list_changed one.
		sess := a.opts.Session
		c.Send(pid, session.ListCatalog{Deadline: time.Now().Add(sess.ConnectTimeout + sess.CallTimeout)})
	}
	m.result.CorrelationID = m.reply.Correlation
	reply.Send(a.engine, m.reply, m.result)
}

// transports is the transport factory of one session actor incarnation:
// it remembers the transports it made, so that once the actor has stopped
// the supervisor can end what they started (a stdio server's whole process
// group). Safe for concurrent use.
type transports struct {
	inner session.TransportFactory

	mu   sync.Mutex
	made []mcp.Transport
}

// maxRemembered bounds the transports an incarnation remembers: only the
// latest can still be open, older ones were closed when their session
// ended; a few more cover closes still in progress.
const maxRemembered = 4

// NewTransport implements session.TransportFactory.
func (t *transports) NewTransport(conn config.Connection) (mcp.Transport, error) {
	tr, err := t.inner.NewTransport(conn)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.made = append(t.made, tr)
	if len(t.made) > maxRemembered {
		t.made = slices.Delete(t.made, 0, len(t.made)-maxRemembered)
	}
	t.mu.Unlock()
	return tr, nil
}

// kill ends the peer of every remembered transport that can be killed: a
// stdio server's process group, anything it started included. A transport
// whose process already exited, or never started, is left alone.
func (t *transports) kill() {
	if t == nil {
		return
	}
	t.mu.Lock()
	made := t.made
	t.made = nil
	t.mu.Unlock()
	for _, tr := range made {
		if k, ok := tr.(session.Killer); ok {
			_ = k.Kill()
		}
	}
}
