package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// errPingMissed is the cause of a ping cancelled at its timeout.
var errPingMissed = errors.New("keepalive ping missed")

// starvedShare: a ping that missed its timeout while mcpflow was starved
// of CPU for at least 1/starvedShare of it says nothing of the upstream.
const starvedShare = 10

// ping checks, every KeepAlive (see armKeepalive), that the session
// answers. A ping not answered within PingTimeout of the time mcpflow
// could run (the time Stalls says it was starved of CPU meanwhile is
// added, up to five timeouts) is missed, unless mcpflow was starved for a
// tenth of the timeout or more (inconclusive); PingFailures missed in a
// row end the session (it hangs), and a ping that fails because the
// session is closed ends it at once, unless it was the transport's: the
// ping is then sent once more (see onPinged). The timeout runs on the
// actor's clock.
func (a *Actor) ping(attempt int) { a.sendPing(attempt, false) }

// sendPing pings attempt's session; again marks the second try of a ping
// whose transport failed.
func (a *Actor) sendPing(attempt int, again bool) {
	if attempt != a.attempt || a.session == nil || a.pinging {
		return
	}
	a.pinging = true
	engine, self, cs := a.engine, a.self, a.session
	ctx, cancel := context.WithCancelCause(a.ctx)
	deadline := startStallDeadline(a.clock, a.opts.pingTimeout(), a.opts.Stalls, func() { cancel(errPingMissed) })
	go func() {
		err := cs.Ping(ctx, nil)
		_, starved := deadline.stop()
		missed := err != nil && errors.Is(context.Cause(ctx), errPingMissed)
		cancel(nil)
		engine.Send(self, pinged{attempt: attempt, err: err, missed: missed, starved: starved, again: again})
	}()
}

func (a *Actor) onPinged(m pinged) {
	if m.attempt != a.attempt || a.session == nil {
		return
	}
	a.pinging = false
	switch {
	case m.err == nil:
		a.lastSuccess, a.missed = a.clock.Now(), 0
	case errors.Is(m.err, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound}):
		a.missed = 0
		return // the server does not answer pings: stop pinging
	case m.missed && m.starved >= a.opts.pingTimeout()/starvedShare:
		// mcpflow itself waited for a CPU for a good part of the ping's
		// wait, however long the wait was extended: the answer may be
		// waiting to be read. The ping neither counts as missed nor
		// clears the count.
		slog.Info("keepalive ping inconclusive: mcpflow was starved of CPU", "connection", a.conn.ID, "generation", a.generation,
			"starved", m.starved.Round(time.Millisecond), "missed", a.missed)
	case m.missed:
		a.missed++
		limit, timeout := a.opts.pingFailures(), a.opts.pingTimeout()
		slog.Warn("keepalive ping missed", "connection", a.conn.ID, "generation", a.generation,
			"missed", a.missed, "limit", limit, "timeout", timeout, "starved", m.starved.Round(time.Millisecond))
		if a.missed >= limit {
			// The session hangs: its calls would wait for their deadlines.
			a.dropSession(fmt.Errorf("%w: %d pings in a row got no answer within %s", errKeepaliveFailed, a.missed, timeout), true)
			return
		}
	case classify(m.err, a.transport) == failProtocol:
		a.missed = 0 // the server answered, with an error: the session lives
	case !m.again:
		// The transport failed: the session may be closed, or the ping
		// went out on a pooled connection the server had closed while
		// it was idle (net/http does not retry a POST). A second ping,
		// on a fresh connection, tells them apart.
		slog.Debug("keepalive ping failed on the transport; pinging once more", "connection", a.conn.ID,
			"generation", a.generation, "err", Redact(a.conn, m.err.Error()))
		a.sendPing(m.attempt, true)
		return
	default:
		// The session is closed (the transport broke, or the server no
		// longer knows it): its calls return at once on their own, and
		// are judged by their own errors, as when the session ends.
		slog.Warn("keepalive found the session closed", "connection", a.conn.ID, "generation", a.generation,
			"err", Redact(a.conn, m.err.Error()))
		a.dropSession(fmt.Errorf("%w: session closed: %w", errKeepaliveFailed, m.err), false)
		return
	}
	a.armKeepalive(m.attempt)
}

// armKeepalive schedules attempt's next ping: KeepAlive from now, less a
// random part of up to the policy's Jitter of it, so that the pings of
// many sessions opened together (at a start, or when an upstream host came
// back) spread over the interval instead of all going out, and all timing
// out under load, in the same instant. A ping is never later than
// KeepAlive.
func (a *Actor) armKeepalive(attempt int) {
	if !a.pings() {
		return // a ping that checked an ended stream, with keepalive off
	}
	a.after(&a.keepTimer, jittered(a.opts.KeepAlive, a.opts.Policy.Jitter, nil), keepaliveDue{attempt: attempt})
}
