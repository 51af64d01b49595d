package run

import (
	"slices"

	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
)

// A run keeps, in its record, the upstream session its calls last went
// to on each connection and session scope (store.Run.Sessions). An
// answer from a session that replaced that one (session.Identity.Replaces)
// is told with the next commit as a session_replaced run event
// (store.Run.Replaced). On a connection whose binding says
// "on_session_replaced": "fail" (Spec.Strict) each call names the session
// it expects (session.CallTool.Expect), and the session actor refuses one
// that would go to another, unsent: the step fails with
// session.ErrSessionReplaced, which no retry repeats, and the run with it.

// sessionAt returns the index in the record of the session the run's calls
// on conn went to, or -1.
func (a *Actor) sessionAt(conn string) int {
	scope := a.spec.Scopes[conn]
	return slices.IndexFunc(a.record.Sessions, func(s store.RunSession) bool { return s.Connection == conn && s.Scope == scope })
}

// expect is the session a call on conn must go to: the one the run's
// calls went to, on a strict connection; nil otherwise, or before the
// run's first answer on it.
func (a *Actor) expect(conn string) *session.Identity {
	if !a.spec.Strict[conn] {
		return nil
	}
	i := a.sessionAt(conn)
	if i < 0 {
		return nil
	}
	s := a.record.Sessions[i]
	return &session.Identity{Generation: s.Generation, Instance: s.Instance}
}

// sawSession notes the session an answer on conn came from: the first on
// conn, or one that replaced the last (held for the next commit's
// session_replaced event). An answer that no session gave (generation 0)
// or that an earlier session gave late says nothing.
func (a *Actor) sawSession(conn string, m answered) {
	if conn == "" || m.generation == 0 {
		return
	}
	got := session.Identity{Generation: m.generation, Instance: m.instance}
	now := store.RunSession{Connection: conn, Scope: a.spec.Scopes[conn], Generation: got.Generation, Instance: got.Instance}
	// The record's sessions are copied before a change: the record last
	// committed shares them.
	sessions := slices.Clone(a.record.Sessions)
	i := a.sessionAt(conn)
	switch {
	case i < 0:
		sessions = append(sessions, now)
	case got.Replaces(session.Identity{Generation: sessions[i].Generation, Instance: sessions[i].Instance}):
		was := sessions[i]
		sessions[i] = now
		a.replaced = append(a.replaced, store.RunEventSession{
			Connection: conn, Scope: now.Scope, OldGeneration: was.Generation, NewGeneration: now.Generation,
			Restarted: was.Instance != now.Instance,
		})
	default:
		return
	}
	a.record.Sessions = sessions
}
