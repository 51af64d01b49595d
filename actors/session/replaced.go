package session

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/reply"
)

// Identity names one upstream session of a connection (and scope): what
// a caller compares to tell that the session it used was replaced, and
// its state (a page, a login, a counter) lost with it.
type Identity struct {
	Generation int64 `json:"generation"`
	// Instance is the mcpflow process that opened the session on a node
	// alone, where generations count from 1 again at every start; "" in a
	// cluster, whose generations grow across nodes and restarts (claimed
	// from the connection's lease).
	Instance string `json:"instance,omitempty"`
}

// Replaces reports whether the session named by next replaced the one
// named by prev, which a caller saw before: it is a later generation, or
// one opened by another mcpflow process. An answer from an earlier
// generation of the same process (a late answer of a call sent before
// the replacement) replaces nothing.
func (next Identity) Replaces(prev Identity) bool {
	if next.Generation == 0 || prev.Generation == 0 {
		return false
	}
	if next.Instance != prev.Instance {
		return true
	}
	return next.Generation > prev.Generation
}

// ErrSessionReplaced means a call that expected one session
// (CallTool.Expect) found another open on its connection: the session it
// expected was replaced, and its state is gone. The call was not sent.
// Its text, "session_replaced", starts the error.
var ErrSessionReplaced = reply.Register("session_replaced", errors.New("session_replaced"))

// ReplacedError is the error of a call refused because the session it
// expected (was) was replaced by now.
func ReplacedError(connection string, was, now Identity) error {
	restarted := ""
	if was.Instance != now.Instance {
		restarted = ", opened since mcpflow restarted"
	}
	return fmt.Errorf("%w: session of connection %q was replaced (generation %d → %d%s): its state is gone",
		ErrSessionReplaced, connection, was.Generation, now.Generation, restarted)
}

// processInstance names this mcpflow process in the identities of the
// sessions it opens on a node alone.
var processInstance = newInstance()

func newInstance() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// identity is the identity of the actor's open (or last) session.
func (a *Actor) identity() Identity {
	if a.opts.Tenure != nil {
		return Identity{Generation: a.generation}
	}
	instance := a.opts.Instance
	if instance == "" {
		instance = processInstance
	}
	return Identity{Generation: a.generation, Instance: instance}
}

// Replaced tells a session actor's parent that a new session replaced the
// connection's previous one (on a scoped session actor, the scope's): the
// state the server kept for the previous session is gone. It is sent once
// the new session is open, with why the previous one ended.
type Replaced struct {
	Connection string
	Previous   int64
	Generation int64
	Cause      Cause
}

// Cause is why a session ended, as an admin event shows it: bounded, and
// with nothing a secret of the connection (see Redact).
type Cause struct {
	// Kind is one of the Cause* constants.
	Kind string
	// Error is the error that ended it (at most maxCauseBytes).
	Error string
	// ExitStatus is a stdio server's exit status ("exit status 1",
	// "signal: killed"), and Stderr the last lines of its stderr (see
	// tail's bounds), when the server exited.
	ExitStatus string
	Stderr     string
}

// Kinds of Cause.
const (
	// CauseExited: the stdio server's process exited.
	CauseExited = "exited"
	// CausePingFailed: keepalive pings went unanswered, or found the
	// session closed.
	CausePingFailed = "ping_failed"
	// CauseUnknownSession: the server no longer knew the session (HTTP
	// 404 on its session id, as after the server restarted).
	CauseUnknownSession = "unknown_session"
	// CauseClosed: the server ended the session.
	CauseClosed = "closed"
	// CauseTransport: the transport broke under the session (EOF, a
	// connection reset or refused).
	CauseTransport = "transport_error"
	// CauseActorRestarted: the connection's session actor crashed, and
	// its successor opened the new session.
	CauseActorRestarted = "session_actor_restarted"
	// CauseActorReplaced: mcpflow replaced the connection's session actor
	// (its source was changed, disabled and enabled again, or logged in).
	CauseActorReplaced = "session_actor_replaced"
)

// maxCauseBytes bounds Cause.Error.
const maxCauseBytes = 1024

// errServerEnded is the cause of a session whose server ended it
// without an error.
var errServerEnded = errors.New("the server ended the session")

// errKeepaliveFailed starts the cause of a session that keepalive ended.
var errKeepaliveFailed = errors.New("keepalive failed")

// causeOf tells why the session on transport t ended, from err.
func (a *Actor) causeOf(err error, t mcp.Transport) Cause {
	c := Cause{Kind: CauseTransport}
	msg := err
	if se, ok := errors.AsType[*stderrError](err); ok {
		c.Kind, c.Stderr, msg = CauseExited, Redact(a.conn, se.stderr), se.err
	}
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		c.Kind, c.ExitStatus = CauseExited, ee.String()
	}
	if c.Kind != CauseExited {
		switch {
		case errors.Is(err, errKeepaliveFailed):
			c.Kind = CausePingFailed
		case errors.Is(err, mcp.ErrSessionMissing):
			c.Kind = CauseUnknownSession
		case errors.Is(err, errServerEnded):
			c.Kind = CauseClosed
		default:
			if e, ok := t.(expiring); ok && e.SessionExpired() {
				c.Kind = CauseUnknownSession
			}
		}
	}
	c.Error = clip(Redact(a.conn, msg.Error()), maxCauseBytes)
	return c
}

// clip cuts s to at most n bytes, on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// lost is a session that ended and whose replacement is not announced
// yet (Replaced).
type lost struct {
	// attempt is the connect attempt that opened it (-1 for a session of
	// a predecessor incarnation).
	attempt    int
	generation int64
	cause      Cause
	// awaitExit is set while the exit report of a stdio server whose
	// session broke (EOF) may still come, with the exit status and the
	// stderr that say why: the announcement waits for it, up to
	// exitReportWait.
	awaitExit bool
	// by is the generation of the session that replaced it; 0 while none
	// is open.
	by int64
}

// exitReportWait bounds how long the announcement of a replaced session
// waits for the exit report of its stdio server (which itself waits up
// to stderrWait for the rest of the stderr).
const exitReportWait = stderrWait + time.Second

// replacedDue announces a replacement whose exit report did not come in
// time.
type replacedDue struct{ attempt int }

// sessionLost notes that the open session ended for cause: its
// replacement, once open, is announced with it.
func (a *Actor) sessionLost(cause error) {
	if a.lost != nil && a.lost.by != 0 {
		a.announce() // the session that replaced it ended already
	}
	c := a.causeOf(cause, a.transport)
	_, stdio := a.transport.(stderrTailer)
	a.lost = &lost{attempt: a.attempt, generation: a.generation, cause: c,
		awaitExit: stdio && (c.Kind == CauseTransport || c.Kind == CauseClosed)}
}

// inherit notes the session of the predecessor incarnation, ended when it
// stopped: the first session this actor opens replaces it.
func (a *Actor) inherit() {
	prev := a.inc.Previous
	if prev.Generation == 0 {
		return
	}
	c := Cause{Kind: CauseActorReplaced, Error: "mcpflow replaced the connection's session actor"}
	if a.inc.Restart || a.inc.Probe {
		c = Cause{Kind: CauseActorRestarted, Error: clip(Redact(a.conn, a.inc.Cause), maxCauseBytes)}
	}
	a.lost = &lost{attempt: -1, generation: prev.Generation, cause: c}
}

// replacedBy notes that the open session replaced the lost one, and
// announces it, unless its stdio server's exit report is still due.
func (a *Actor) replacedBy() {
	if a.lost == nil {
		return
	}
	a.lost.by = a.generation
	if !a.lost.awaitExit {
		a.announce()
		return
	}
	a.after(&a.exitTimer, exitReportWait, replacedDue{attempt: a.lost.attempt})
}

// noteExit takes the exit report of the stdio server of a lost session:
// its exit status and stderr say why the session ended.
func (a *Actor) noteExit(m peerGone) {
	l := a.lost
	if l == nil || l.attempt != m.attempt || !l.awaitExit || !m.certain || m.err == nil {
		return
	}
	if c := a.causeOf(m.err, nil); c.Kind == CauseExited {
		l.cause = c
	}
	l.awaitExit = false
	if l.by != 0 {
		a.announce()
	}
}

// onReplacedDue announces a replacement whose exit report is late.
func (a *Actor) onReplacedDue(m replacedDue) {
	if a.lost != nil && a.lost.attempt == m.attempt && a.lost.by != 0 {
		a.announce()
	}
}

// announce tells the parent that the lost session was replaced.
func (a *Actor) announce() {
	l := a.lost
	a.lost = nil
	if a.exitTimer != nil {
		a.exitTimer.Stop()
		a.exitTimer = nil
	}
	slog.Info("mcp session replaced", "connection", a.conn.ID, "previous", l.generation, "generation", l.by,
		"cause", l.cause.Kind, "err", l.cause.Error)
	if a.parent == nil {
		return
	}
	a.engine.SendWithSender(a.parent, Replaced{Connection: a.conn.ID, Previous: l.generation, Generation: l.by, Cause: l.cause}, a.self)
}

// expected is the session a call or read expects, if any.
func (w work) expected() *Identity {
	switch {
	case w.call != nil:
		return w.call.Expect
	case w.read != nil:
		return w.read.Expect
	case w.prompt != nil:
		return w.prompt.Expect
	case w.complete != nil:
		return w.complete.Expect
	}
	return nil
}

// refuseReplaced answers work that expects a session other than the open
// one, without sending it, and reports whether it did.
func (a *Actor) refuseReplaced(w work) bool {
	want := w.expected()
	now := a.identity()
	if want == nil || *want == now {
		return false
	}
	node, epoch := a.tenure()
	a.answer(w, ToolResult{Error: reply.Fail(ReplacedError(a.conn.ID, *want, now)),
		Generation: now.Generation, Instance: now.Instance, Node: node, Epoch: epoch})
	return true
}
