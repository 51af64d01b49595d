package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// handoff passes a connected session from its connect goroutine to the
// actor. A session the actor never claims (it stopped first) is closed by
// whichever side comes last, so a connect that races a stop leaves
// nothing behind.
type handoff struct {
	mu        sync.Mutex
	session   *mcp.ClientSession
	client    *mcp.Client
	transport mcp.Transport
	end       context.CancelFunc
	claimed   bool
	stopped   bool
	done      chan struct{} // closed when the connect goroutine ends
}

// connect starts a connect attempt: it waits for a slot of the shared
// limiter, then connects in a goroutine. A degraded connection's connect
// is its probe; the connection stays degraded until it succeeds.
func (a *Actor) connect() {
	a.attempt++
	a.lease.Release()
	a.lease = nil
	if !a.degraded {
		a.setState(StateConnecting)
	}
	attempt, engine, self := a.attempt, a.engine, a.self
	lease, granted := a.opts.Limiter.Acquire(func() { engine.Send(self, slotGranted{attempt: attempt}) })
	a.lease = lease
	if granted {
		a.startConnect()
	}
}

// startConnect opens the session of the current attempt in a goroutine,
// under the actor's context: stopping the actor cancels the connect, and
// the goroutine then ends what it started (the transport's process).
func (a *Actor) startConnect() {
	attempt, conn, opts, factory := a.attempt, a.conn, a.opts, a.factory
	level := conn.Client.Level()
	engine, self, lease := a.engine, a.self, a.lease
	client := a.newClient(attempt)
	observe := func(t mcp.Transport) mcp.Transport { return a.observeNotices(t, attempt) }
	h := &handoff{done: make(chan struct{}), client: client}
	a.handoffs[attempt] = h
	// live bounds the session's transport (an HTTP+SSE stream lives in
	// its connect context): it ends when the session is let go or the
	// actor stops, or when the connect overruns ConnectTimeout.
	live, end := context.WithCancel(a.ctx)
	go func() {
		defer close(h.done)
		defer lease.Release()
		if live.Err() != nil {
			end()
			engine.Send(self, connected{attempt: attempt, err: fmt.Errorf("connect: %w", live.Err())})
			return
		}
		claim, cancelClaim := context.WithTimeout(live, opts.ConnectTimeout)
		gen, err := claimGeneration(claim, opts.Tenure)
		cancelClaim()
		if err != nil {
			end()
			engine.Send(self, connected{attempt: attempt, err: err})
			return
		}
		t, err := factory.NewTransport(conn)
		if err != nil {
			end()
			engine.Send(self, connected{attempt: attempt, err: fmt.Errorf("transport: %w", err)})
			return
		}
		if q, ok := t.(quieter); ok && opts.NoListen {
			q.quiet()
		}
		observed := observe(t) // progress and log messages, read in order (noticeread.go)
		if w, ok := t.(peerWatcher); ok {
			w.watchPeer(func(err error, certain bool) {
				engine.Send(self, peerGone{attempt: attempt, err: err, certain: certain})
			})
		}
		timeout := time.AfterFunc(opts.ConnectTimeout, end)
		cs, err := client.Connect(live, observed, &mcp.ClientSessionOptions{ProtocolVersion: cmp.Or(conn.Transport.ProtocolVersion, opts.ProtocolVersion)})
		if !timeout.Stop() && err != nil {
			err = fmt.Errorf("timed out after %s: %w", opts.ConnectTimeout, err)
		}
		if err != nil {
			end()
			if l, ok := t.(loginWatcher); ok && l.needsLogin() != nil {
				err = l.needsLogin() // go-sdk does not keep it in its error's chain
			}
			if k, ok := t.(Killer); ok {
				_ = k.Kill()
			}
			closeIdle(t)
			err = whyStartFailed(err, t) // a server that exited at start says why
			engine.Send(self, connected{attempt: attempt, err: fmt.Errorf("connect: %w", err)})
			return
		}
		setLogLevel(live, cs, conn, level, opts.ConnectTimeout)
		h.mu.Lock()
		if h.stopped { // the actor stopped meanwhile: end what this connect started
			h.mu.Unlock()
			closeSession(cs, t, end, opts.CloseTimeout)
			return
		}
		h.session, h.transport, h.end = cs, t, end
		h.mu.Unlock()
		engine.Send(self, connected{attempt: attempt, hand: h, generation: gen})
	}()
}

// newClient builds the go-sdk client of one connect attempt. It declares
// what the connection's client block answers (answerAsClient: roots,
// elicitation, sampling) with its roots, and forwards the tools, resources
// and prompts list_changed notifications to the actor (none with
// NoListen). Keepalive is the actor's own (see ping), not go-sdk's: go-sdk
// closes a session whose ping failed gracefully, which waits for the calls
// in flight.
func (a *Actor) newClient(attempt int) *mcp.Client {
	engine, self := a.engine, a.self
	// A stateless-era server's input_required answers go back to the
	// caller, who keeps them durably (mrtr.go), rather than to go-sdk's
	// middleware, which would wait on the handlers inside the call.
	opts := &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}}
	refuser := a.answerAsClient(attempt, opts)
	build := func() *mcp.Client {
		c := mcp.NewClient(clientInfo, opts)
		c.AddReceivingMiddleware(refuser)
		for _, r := range a.conn.Client.RootList() {
			c.AddRoots(&mcp.Root{URI: r.URI, Name: r.Name})
		}
		return c
	}
	if a.opts.NoListen {
		// Without list_changed handlers, go-sdk opens no
		// subscriptions/listen stream (the stateless era).
		return build()
	}
	opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) {
		engine.Send(self, listChanged{attempt: attempt, list: "tools"})
	}
	opts.ResourceListChangedHandler = func(context.Context, *mcp.ResourceListChangedRequest) {
		engine.Send(self, listChanged{attempt: attempt, list: "resources"})
	}
	opts.PromptListChangedHandler = func(context.Context, *mcp.PromptListChangedRequest) {
		engine.Send(self, listChanged{attempt: attempt, list: "prompts"})
	}
	return build()
}

// clientInfo is how mcpflow names itself to the servers.
var clientInfo = &mcp.Implementation{Name: "mcpflow", Version: "0.1.0"}

// statelessEra is the first MCP version without sessions (and without
// ping); versions are dates, so they compare as strings.
const statelessEra = "2026-07-28"

// onConnected takes over the session a connect opened, or handles its
// failure.
func (a *Actor) onConnected(m connected) {
	h := a.handoffs[m.attempt]
	delete(a.handoffs, m.attempt)
	var cs *mcp.ClientSession
	var client *mcp.Client
	var t mcp.Transport
	var end context.CancelFunc
	if h != nil {
		h.mu.Lock()
		cs, client, t, end, h.claimed = h.session, h.client, h.transport, h.end, true
		h.mu.Unlock()
	}
	if m.attempt != a.attempt {
		if cs != nil {
			go closeSession(cs, t, end, a.opts.CloseTimeout)
		}
		return
	}
	a.lease = nil // released by the connect goroutine
	if lh, ok := errors.AsType[loginHoster](m.err); ok {
		a.awaitLogin(m.err, lh.LoginHost())
		return
	}
	if m.err != nil {
		a.reportConnectFailure(m.err)
		a.failListings(fmt.Errorf("connection %q: %w: %s", a.conn.ID, ErrUnavailable, Redact(a.conn, m.err.Error())))
		a.failed(m.err)
		return
	}
	now := a.clock.Now()
	if a.degraded {
		slog.Info("connection recovered", "connection", a.conn.ID)
		a.degraded, a.probation = false, true
		a.backoff.Reset()
	}
	a.answered = false
	a.session, a.client, a.transport, a.end = cs, client, t, end
	a.reportedCause = "" // the next failure is news again
	a.generation++
	if m.generation != 0 { // claimed from the tenure: the cluster's count
		a.generation = m.generation
	}
	a.opened++
	a.noteTaskOrigin()
	a.openedAt, a.lastSuccess, a.nextTry = now, now, time.Time{}
	a.setState(StateOpen)
	slog.Info("mcp session open", "connection", a.conn.ID, "generation", a.generation)
	a.replacedBy()
	if a.opts.CatalogMaxAge > 0 && now.Sub(a.listedAt) >= a.opts.CatalogMaxAge && !a.listQueued() {
		a.relist() // never listed, or stale: list it now
	}
	attempt := a.attempt
	if _, ok := t.(peerWatcher); !ok {
		// The transport does not tell when its peer goes: a goroutine
		// waits for the session's end instead.
		engine, self := a.engine, a.self
		go func() { engine.Send(self, closed{attempt: attempt, err: cs.Wait()}) }()
	}
	if a.pings() {
		a.armKeepalive(attempt)
	}
	a.drain()
}

// pings reports whether the open session is pinged: keepalive is on, and
// its protocol version has ping. ping is gone from the stateless era
// (2026-07-28, SEP-2575): go-sdk sends it without _meta, which a
// stateless HTTP server refuses.
func (a *Actor) pings() bool {
	return a.opts.KeepAlive > 0 && a.session != nil && a.session.InitializeResult().ProtocolVersion < statelessEra
}

// sessionEnded lets go of a session that closed: the work in flight on it
// returns at once and is judged by its own error (a call the server
// refused for an unknown session is replayed).
func (a *Actor) sessionEnded(cause error) {
	if cause == nil {
		cause = errServerEnded
	}
	a.dropSession(fmt.Errorf("session ended: %w", cause), false)
}

// onPeerGone handles a transport's report that its peer went, or may
// have: a stdio server that exited ends the session as its close would;
// an ended notification stream is checked with a ping at once (go-sdk
// reopens a stream a proxy cut, and the ping is answered; a server that
// died fails it, and the session is dropped without waiting for the next
// keepalive).
func (a *Actor) onPeerGone(m peerGone) {
	a.noteExit(m)
	if m.attempt == a.attempt && a.session == nil {
		a.noteStderr(m.err)
		return
	}
	if m.attempt != a.attempt || a.session == nil {
		return
	}
	if m.certain {
		a.sessionEnded(m.err)
		return
	}
	slog.Debug("mcp notification stream ended; pinging", "connection", a.conn.ID, "generation", a.generation, "err", Redact(a.conn, m.err.Error()))
	if a.session.InitializeResult().ProtocolVersion < statelessEra {
		a.ping(m.attempt)
	}
}

// noteStderr records as the last error the report of a stdio server that
// exited after its session (or its connect) had already failed for what
// the client saw (an EOF): the report carries the server's exit status and
// the last lines of its stderr, which say why, for the status and the
// degraded error.
func (a *Actor) noteStderr(err error) {
	if _, ok := errors.AsType[*stderrError](err); ok {
		a.noteError(err)
		a.report()
	}
}

// failed handles a failed start: a connect (or initialize) that failed,
// or a session that died before it proved itself. The session is reopened
// after a backoff, or, once the policy's limit of failed starts is
// reached, the connection is degraded; a session a probe opened that dies
// unproven degrades it again at once. Queued work keeps waiting, each
// until its own deadline, unless the connection degrades.
func (a *Actor) failed(cause error) {
	a.noteError(cause)
	p := a.opts.Policy
	switch {
	case a.degraded: // a probe failed: the next one after ProbeInterval
		a.retryAfter(p.ProbeInterval, StateDegraded)
		return
	case a.probation:
		a.degrade("the session a probe opened ended before it proved itself")
		return
	case !a.intensity.Allow(a.clock.Now()):
		a.degrade(fmt.Sprintf("%d restarts within %s, and no session proved itself", p.MaxRestarts, p.RestartWindow))
		return
	}
	a.restarts++
	a.opts.Metrics.Reconnect(a.conn.ID)
	a.retryAfter(a.backoff.Next(), StateBackoff)
}

// degrade makes calls fail fast, for why, until a probe connects; the
// first probe is due after ProbeInterval.
func (a *Actor) degrade(why string) {
	p := a.opts.Policy
	a.degraded, a.probation, a.degradedWhy = true, false, why
	a.backoff.Reset()
	a.retryAfter(p.ProbeInterval, StateDegraded)
	slog.Error("connection degraded", "connection", a.conn.ID, "why", why, "err", a.lastErr)
	a.failQueue(a.degradedError())
}

// proved marks the open session as one that proved itself: the failed
// starts before it were bad luck, not a crash loop, and are forgotten.
func (a *Actor) proved() {
	a.answered, a.probation = true, false
	a.intensity.Reset()
	a.backoff.Reset()
}

// reopen replaces a session that proved itself and then died (cause): an
// upstream killed from outside is not in a crash loop, so the new session
// is connected at once, with the backoff and the failed starts forgotten,
// and the restart does not count toward degrading the connection.
func (a *Actor) reopen(cause error) {
	a.noteError(cause)
	a.proved()
	a.restarts++
	a.opts.Metrics.Reconnect(a.conn.ID)
	a.nextTry = time.Time{}
	a.connect()
}

// retryAfter arms the next connect attempt (a reconnect, or a probe) and
// reports state.
func (a *Actor) retryAfter(d time.Duration, state State) {
	a.retryToken++
	a.nextTry = a.clock.Now().Add(d)
	a.after(&a.retryTimer, d, retryDue{token: a.retryToken})
	a.setState(state)
}

// noteError records err, with secrets removed, as the last error.
func (a *Actor) noteError(err error) {
	a.lastErr, a.lastErrAt = Redact(a.conn, err.Error()), a.clock.Now()
}

// dropSession lets go of a session that died (cause) and arranges the
// next one: at once if it had proved itself, else as a failed start.
// With answerNow (a failed keepalive: the session hangs, and its calls
// would wait for their deadlines), the work in flight on it fails at once
// with ErrSessionLost; otherwise each finishes on its own, promptly, and
// is judged by its own error (on an expired HTTP session, a request the
// server refused was never run and is replayed).
func (a *Actor) dropSession(cause error, answerNow bool) {
	proven := a.opts.Policy.ProvedItself(a.openedAt, a.clock.Now(), a.answered)
	slog.Warn("mcp session lost", "connection", a.conn.ID, "generation", a.generation, "proved_itself", proven, "err", Redact(a.conn, cause.Error()))
	if answerNow {
		for run, f := range a.running {
			if f.attempt != a.attempt {
				continue
			}
			delete(a.running, run)
			a.withdrawAsks(run, "lost with its session")
			f.cancel()
			a.answerLost(f, cause)
		}
	}
	a.sessionLost(cause)
	go closeSession(a.session, a.transport, a.end, a.opts.CloseTimeout)
	a.session, a.client, a.transport, a.end = nil, nil, nil, nil
	if a.keepTimer != nil {
		a.keepTimer.Stop()
	}
	a.pinging, a.missed = false, 0
	if proven {
		a.reopen(cause)
		return
	}
	a.failed(cause)
}

// shutdown cancels every call and connect, fails running work ("shutting
// down") and queued work (ErrRetired: never sent) and closes the session
// within CloseTimeout, killing the peer if it overruns. A connect in
// progress is cancelled and waited for (within CloseTimeout), so that
// whatever it started is ended before the actor is gone. Running work
// is answered here: its own completion message would reach a stopped
// actor and be dropped.
func (a *Actor) shutdown() {
	if a.cancel == nil {
		return // never started
	}
	a.cancel()
	for _, t := range []Timer{a.retryTimer, a.keepTimer, a.staleTimer, a.sweepTimer, a.debounceTimer, a.exitTimer} {
		if t != nil {
			t.Stop()
		}
	}
	a.lease.Release()
	err := fmt.Errorf("connection %q: %w: shutting down", a.conn.ID, ErrUnavailable)
	for _, f := range a.running {
		if f.keepTask != nil {
			keepUpstream(f.transport) // its task outlives this process
		}
		a.fail(f.w, err)
	}
	a.running = nil
	// What waits in the queue was never sent: it may go to the next
	// session actor.
	a.failQueue(fmt.Errorf("connection %q: %w: its session actor stopped before the call was sent", a.conn.ID, ErrRetired))
	if a.session != nil {
		closeSession(a.session, a.transport, a.end, a.opts.CloseTimeout)
		a.session = nil
	}
	limit := time.After(a.opts.CloseTimeout)
	for _, h := range a.handoffs {
		select {
		case <-h.done:
		case <-limit:
		}
		h.mu.Lock()
		h.stopped = true
		cs, t, end := h.session, h.transport, h.end
		if h.claimed {
			cs = nil
		}
		h.claimed = true
		h.mu.Unlock()
		if cs != nil {
			closeSession(cs, t, end, a.opts.CloseTimeout)
		}
	}
}
