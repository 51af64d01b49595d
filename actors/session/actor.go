package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
)

// Internal messages, sent by the actor's own goroutines and timers. They
// carry the connect attempt they belong to: a message of an earlier
// attempt is stale.
type (
	// slotGranted: the limiter gave attempt its connect slot.
	slotGranted struct{ attempt int }
	connected   struct {
		attempt int
		hand    *handoff
		err     error
	}
	// closed: ClientSession.Wait of attempt's session returned.
	closed struct {
		attempt int
		err     error
	}
	callDone struct {
		run    uint64
		result ToolResult
		rpcErr error
	}
	listDone struct {
		run    uint64
		result CatalogListed
		rpcErr error
	}
	toolsChanged struct{ attempt int }
	// retryDue: the backoff (or probe interval) armed as token passed.
	retryDue struct{ token int }
	// keepaliveDue: time to ping attempt's session; pinged: its answer.
	keepaliveDue struct{ attempt int }
	pinged       struct {
		attempt int
		err     error
	}
	// catalogStale re-lists the catalog once it is CatalogMaxAge old.
	catalogStale struct{ attempt int }
	// sweep fails queued work whose deadline has passed.
	sweep struct{}
)

// work is a call, a resource read or a catalog listing waiting for the
// session.
type work struct {
	call *CallTool
	read *ReadResource
	list *ListCatalog
	// replayed is set on work sent again after the server refused it
	// without running it; it is never sent a third time.
	replayed bool
}

func (w work) deadline() time.Time {
	switch {
	case w.call != nil:
		return w.call.Deadline
	case w.read != nil:
		return w.read.Deadline
	}
	return w.list.Deadline
}

// owner is who made a call or read, "" for a listing.
func (w work) owner() string {
	switch {
	case w.call != nil:
		return w.call.Owner
	case w.read != nil:
		return w.read.Owner
	}
	return ""
}

// answer replies to a call or read.
func (w work) answer(r ToolResult) {
	if w.call != nil {
		w.call.Reply(r)
	} else {
		w.read.Reply(r)
	}
}

func (w work) fail(err error) {
	switch {
	case w.call != nil:
		w.call.Reply(ToolResult{CorrelationID: w.call.CorrelationID, Err: err})
		return
	case w.read != nil:
		w.read.Reply(ToolResult{CorrelationID: w.read.CorrelationID, Err: err})
		return
	}
	if w.list.Reply != nil { // the actor's own re-list has no reply address
		w.list.Reply(CatalogListed{Err: err})
	}
}

// what names w in errors.
func (w work) what() string {
	switch {
	case w.call != nil:
		return "the call to " + w.call.Tool
	case w.read != nil:
		return "the read of " + w.read.URI
	}
	return "the catalog listing"
}

// inflight is work sent on a session.
type inflight struct {
	w         work
	cancel    context.CancelFunc
	attempt   int
	gen       int64
	transport mcp.Transport
}

// handoff passes a connected session from its connect goroutine to the
// actor. A session the actor never claims (it stopped first) is closed by
// whichever side comes last, so a connect that races a stop leaves
// nothing behind.
type handoff struct {
	mu        sync.Mutex
	session   *mcp.ClientSession
	transport mcp.Transport
	end       context.CancelFunc
	claimed   bool
	stopped   bool
	done      chan struct{} // closed when the connect goroutine ends
}

// Actor owns one upstream MCP session for one connection.
type Actor struct {
	conn    config.Connection
	factory TransportFactory
	opts    Options
	inc     Incarnation
	clock   Clock

	engine *actor.Engine
	self   *actor.PID
	parent *actor.PID
	// ctx ends when the actor stops: it cancels every call and connect.
	ctx    context.Context
	cancel context.CancelFunc

	state     State
	attempt   int // increments per connect attempt; stale replies are ignored
	session   *mcp.ClientSession
	transport mcp.Transport
	end       context.CancelFunc // ends the session's transport context
	lease     *Lease             // the connect slot held or waited for
	handoffs  map[int]*handoff

	running  map[uint64]*inflight // work in flight by run id
	nextRun  uint64
	queue    []work
	refresh  struct{ running, due bool }
	listedAt time.Time // when the catalog was last listed; zero before

	backoff    Backoff
	intensity  *Intensity
	degraded   bool // fail fast; a probe runs every ProbeInterval
	retryToken int
	retryTimer Timer
	nextTry    time.Time
	pinging    bool
	keepTimer  Timer
	staleTimer Timer
	sweepTimer Timer
	sweepAt    time.Time

	generation  int64
	opened      int
	restarts    int
	openedAt    time.Time
	lastErr     string
	lastErrAt   time.Time
	lastSuccess time.Time
	changedAt   time.Time
}

// New returns a producer of the session actor for conn.
func New(conn config.Connection, factory TransportFactory, opts Options) actor.Producer {
	return Continue(conn, factory, opts, Incarnation{})
}

// Continue returns a producer of a session actor for conn that takes over
// from a predecessor as inc says.
func Continue(conn config.Connection, factory TransportFactory, opts Options, inc Incarnation) actor.Producer {
	return func() actor.Receiver {
		return &Actor{conn: conn, factory: factory, opts: opts, inc: inc, state: StateIdle}
	}
}

// Receive handles one message.
func (a *Actor) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case actor.Started:
		a.begin(c)
	case CallTool:
		a.admit(work{call: &m})
	case ListCatalog:
		a.admit(work{list: &m})
	case ReadResource:
		a.admit(work{read: &m})
	case CancelCalls:
		a.cancelCalls(m.Owner)
	case GetStatus:
		m.Reply(a.status())
	case SetPolicy:
		a.opts.Policy, a.backoff.Policy = m.Policy, m.Policy
		a.intensity.Max, a.intensity.Window = m.Policy.MaxRestarts, m.Policy.RestartWindow
	case slotGranted:
		if m.attempt == a.attempt && a.handoffs[m.attempt] == nil && a.lease != nil {
			a.startConnect()
		}
	case connected:
		a.onConnected(m)
	case closed:
		if m.attempt == a.attempt && a.session != nil {
			cause := m.err
			if cause == nil {
				cause = errors.New("the server ended the session")
			}
			// The connection is closed: the work in flight on it returns at
			// once and is judged by its own error (a call the server
			// refused for an unknown session is replayed).
			a.dropSession(fmt.Errorf("session ended: %w", cause), false)
		}
	case callDone:
		a.onCallDone(m)
	case listDone:
		a.onListDone(m)
	case toolsChanged:
		if m.attempt == a.attempt {
			a.onToolsChanged()
		}
	case retryDue:
		if m.token == a.retryToken && (a.state == StateBackoff || a.state == StateDegraded) {
			a.connect()
		}
	case keepaliveDue:
		a.ping(m.attempt)
	case pinged:
		a.onPinged(m)
	case catalogStale:
		if m.attempt == a.attempt && a.clock.Now().Sub(a.listedAt) >= a.opts.CatalogMaxAge {
			a.onToolsChanged()
		}
	case sweep:
		a.sweepQueue()
	case actor.Stopped:
		a.shutdown()
	}
}

// begin takes over what the predecessor (if any) left.
func (a *Actor) begin(c *actor.Context) {
	a.engine, a.self, a.parent = c.Engine(), c.PID(), c.Parent()
	a.ctx, a.cancel = context.WithCancel(context.Background())
	a.clock = clockOrSystem(a.opts.Clock)
	a.handoffs = map[int]*handoff{}
	a.running = map[uint64]*inflight{}
	a.backoff = Backoff{Policy: a.opts.Policy}
	prev := a.inc.Previous
	a.generation, a.opened, a.restarts = prev.Generation, prev.SessionsOpened, prev.Restarts
	a.lastErr, a.lastErrAt, a.lastSuccess = prev.LastError, prev.LastErrorAt, prev.LastSuccessAt
	a.intensity = NewIntensity(a.opts.Policy, prev.RecentRestarts)
	switch {
	case a.inc.Probe:
		a.degraded = true
		a.noteError(errors.New(a.inc.Cause))
		a.setState(StateDegraded)
		a.connect()
	case a.inc.Restart:
		a.failed(errors.New(a.inc.Cause))
	}
}

// send delivers msg to the actor itself.
func (a *Actor) send(msg any) {
	a.engine.Send(a.self, msg)
}

// after sends msg to the actor once d has passed on its clock.
func (a *Actor) after(t *Timer, d time.Duration, msg any) {
	if *t != nil {
		(*t).Stop()
	}
	engine, self := a.engine, a.self
	*t = a.clock.AfterFunc(d, func() { engine.Send(self, msg) })
}

// admit starts w now, queues it, or refuses it. A call that arrives while
// the session is connecting or backing off waits for it, until its own
// deadline; only a degraded connection fails calls at once.
func (a *Actor) admit(w work) {
	switch {
	case !w.deadline().IsZero() && a.clock.Now().After(w.deadline()):
		w.fail(fmt.Errorf("connection %q: %w", a.conn.ID, ErrDeadline))
		return
	case a.degraded:
		w.fail(a.degradedError())
		return
	case a.state == StateOpen && len(a.running) < a.opts.MaxInFlight && len(a.queue) == 0:
		a.start(w)
		return
	case len(a.queue) >= a.opts.MaxQueued:
		w.fail(fmt.Errorf("connection %q: %w (%d queued)", a.conn.ID, ErrOverloaded, len(a.queue)))
		return
	}
	a.queue = append(a.queue, w)
	a.scheduleSweep(w.deadline())
	if a.state == StateIdle {
		a.connect()
	}
}

// degradedError is what calls to a degraded connection fail with.
func (a *Actor) degradedError() error {
	p := a.opts.Policy
	next := "now"
	if d := a.nextTry.Sub(a.clock.Now()); d > 0 {
		next = "in " + d.Round(time.Millisecond).String()
	}
	return fmt.Errorf("connection %q: %w: %d restarts within %s; calls fail fast until a probe connects (next probe %s); last error: %s",
		a.conn.ID, ErrDegraded, p.MaxRestarts, p.RestartWindow, next, a.lastErr)
}

// listQueued reports whether a catalog listing waits in the queue.
func (a *Actor) listQueued() bool {
	for _, w := range a.queue {
		if w.list != nil {
			return true
		}
	}
	return false
}

// scheduleSweep makes sure the queue is swept by deadline d, so queued
// work fails when its own deadline passes, not only when it leaves the
// queue.
func (a *Actor) scheduleSweep(d time.Time) {
	if d.IsZero() || (!a.sweepAt.IsZero() && !d.Before(a.sweepAt)) {
		return
	}
	a.sweepAt = d
	a.after(&a.sweepTimer, d.Sub(a.clock.Now()), sweep{})
}

// sweepQueue fails queued work past its deadline and schedules the next
// sweep.
func (a *Actor) sweepQueue() {
	a.sweepAt = time.Time{}
	now, next := a.clock.Now(), time.Time{}
	kept := a.queue[:0]
	for _, w := range a.queue {
		d := w.deadline()
		switch {
		case !d.IsZero() && !now.Before(d):
			w.fail(a.waitedError())
		default:
			kept = append(kept, w)
			if !d.IsZero() && (next.IsZero() || d.Before(next)) {
				next = d
			}
		}
	}
	clear(a.queue[len(kept):])
	a.queue = kept
	a.scheduleSweep(next)
}

// waitedError is what queued work fails with at its deadline: it says
// what the session was doing meanwhile.
func (a *Actor) waitedError() error {
	switch a.state {
	case StateOpen:
		return fmt.Errorf("connection %q: %w (waited in the queue)", a.conn.ID, ErrDeadline)
	case StateConnecting:
		return fmt.Errorf("connection %q: %w (waited for the session to connect)", a.conn.ID, ErrDeadline)
	}
	return fmt.Errorf("connection %q: %w (waited for a reconnect; last error: %s)", a.conn.ID, ErrDeadline, a.lastErr)
}

// drain starts queued work while the session has free slots.
func (a *Actor) drain() {
	for a.state == StateOpen && len(a.running) < a.opts.MaxInFlight && len(a.queue) > 0 {
		w := a.queue[0]
		a.queue[0] = work{}
		a.queue = a.queue[1:]
		if d := w.deadline(); !d.IsZero() && a.clock.Now().After(d) {
			w.fail(fmt.Errorf("connection %q: %w", a.conn.ID, ErrDeadline))
			continue
		}
		a.start(w)
	}
}

// cancelCalls withdraws owner's queued calls and cancels its calls in
// flight (their goroutines answer when the upstream call returns).
func (a *Actor) cancelCalls(owner string) {
	if owner == "" {
		return
	}
	kept := a.queue[:0]
	for _, w := range a.queue {
		if w.owner() == owner {
			w.fail(fmt.Errorf("connection %q: %w", a.conn.ID, ErrCancelled))
			continue
		}
		kept = append(kept, w)
	}
	clear(a.queue[len(kept):])
	a.queue = kept
	for _, f := range a.running {
		if f.w.owner() == owner {
			f.cancel()
		}
	}
}

// failListings fails the queued catalog listings with err: a refresh
// reports a connect that failed at once, rather than at its deadline
// (calls wait for the reconnect; a listing the actor queued itself is
// made again once a session opens).
func (a *Actor) failListings(err error) {
	kept := a.queue[:0]
	for _, w := range a.queue {
		if w.list != nil {
			w.fail(err)
			continue
		}
		kept = append(kept, w)
	}
	clear(a.queue[len(kept):])
	a.queue = kept
}

// failQueue fails every queued call with err.
func (a *Actor) failQueue(err error) {
	for _, w := range a.queue {
		w.fail(err)
	}
	a.queue = nil
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
	engine, self, lease := a.engine, a.self, a.lease
	h := &handoff{done: make(chan struct{})}
	a.handoffs[attempt] = h
	client := a.newClient(attempt)
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
		t, err := factory.NewTransport(conn)
		if err != nil {
			end()
			engine.Send(self, connected{attempt: attempt, err: fmt.Errorf("transport: %w", err)})
			return
		}
		timeout := time.AfterFunc(opts.ConnectTimeout, end)
		cs, err := client.Connect(live, t, &mcp.ClientSessionOptions{ProtocolVersion: cmp.Or(conn.Transport.ProtocolVersion, opts.ProtocolVersion)})
		if !timeout.Stop() && err != nil {
			err = fmt.Errorf("timed out after %s: %w", opts.ConnectTimeout, err)
		}
		if err != nil {
			end()
			if k, ok := t.(Killer); ok {
				_ = k.Kill()
			}
			engine.Send(self, connected{attempt: attempt, err: fmt.Errorf("connect: %w", err)})
			return
		}
		h.mu.Lock()
		if h.stopped { // the actor stopped meanwhile: end what this connect started
			h.mu.Unlock()
			closeSession(cs, t, end, opts.CloseTimeout)
			return
		}
		h.session, h.transport, h.end = cs, t, end
		h.mu.Unlock()
		engine.Send(self, connected{attempt: attempt, hand: h})
	}()
}

// newClient builds the go-sdk client of one connect attempt. It advertises
// no client capabilities (mcpflow serves no roots, sampling or
// elicitation), and forwards tools/list_changed to the actor. Keepalive
// is the actor's own (see ping), not go-sdk's: go-sdk closes a session
// whose ping failed gracefully, which waits for the calls in flight.
func (a *Actor) newClient(attempt int) *mcp.Client {
	engine, self := a.engine, a.self
	return mcp.NewClient(&mcp.Implementation{Name: "mcpflow", Version: "0.1.0"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			engine.Send(self, toolsChanged{attempt: attempt})
		},
	})
}

func (a *Actor) onConnected(m connected) {
	h := a.handoffs[m.attempt]
	delete(a.handoffs, m.attempt)
	var cs *mcp.ClientSession
	var t mcp.Transport
	var end context.CancelFunc
	if h != nil {
		h.mu.Lock()
		cs, t, end, h.claimed = h.session, h.transport, h.end, true
		h.mu.Unlock()
	}
	if m.attempt != a.attempt {
		if cs != nil {
			go closeSession(cs, t, end, a.opts.CloseTimeout)
		}
		return
	}
	a.lease = nil // released by the connect goroutine
	if m.err != nil {
		slog.Warn("mcp connect failed", "connection", a.conn.ID, "attempt", a.attempt, "degraded", a.degraded, "err", Redact(a.conn, m.err.Error()))
		a.failListings(fmt.Errorf("connection %q: %w: %s", a.conn.ID, ErrUnavailable, Redact(a.conn, m.err.Error())))
		a.failed(m.err)
		return
	}
	now := a.clock.Now()
	if a.degraded {
		slog.Info("connection recovered", "connection", a.conn.ID)
		a.degraded = false
		a.intensity.Reset()
		a.backoff.Reset()
	}
	a.session, a.transport, a.end = cs, t, end
	a.generation++
	a.opened++
	a.openedAt, a.lastSuccess, a.nextTry = now, now, time.Time{}
	a.setState(StateOpen)
	slog.Info("mcp session open", "connection", a.conn.ID, "generation", a.generation)
	if a.opts.CatalogMaxAge > 0 && now.Sub(a.listedAt) >= a.opts.CatalogMaxAge && !a.listQueued() {
		a.onToolsChanged() // never listed, or stale: list it now
	}
	engine, self, attempt := a.engine, a.self, a.attempt
	go func() { engine.Send(self, closed{attempt: attempt, err: cs.Wait()}) }()
	if a.opts.KeepAlive > 0 {
		a.after(&a.keepTimer, a.opts.KeepAlive, keepaliveDue{attempt: attempt})
	}
	a.drain()
}

// failed handles a connect that failed or a session that died: the
// session is reopened after a backoff, or, once the policy's restart
// limit is reached, the connection is degraded. Queued work keeps
// waiting, each until its own deadline, unless the connection degrades.
func (a *Actor) failed(cause error) {
	a.noteError(cause)
	p := a.opts.Policy
	if a.degraded { // a probe failed: the next one after ProbeInterval
		a.retryAfter(p.ProbeInterval, StateDegraded)
		return
	}
	if !a.intensity.Allow(a.clock.Now()) {
		a.degraded = true
		a.backoff.Reset()
		a.retryAfter(p.ProbeInterval, StateDegraded)
		slog.Error("connection degraded", "connection", a.conn.ID, "restarts", p.MaxRestarts, "window", p.RestartWindow, "err", a.lastErr)
		a.failQueue(a.degradedError())
		return
	}
	a.restarts++
	a.retryAfter(a.backoff.Next(), StateBackoff)
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
// next one. With answerNow (a failed keepalive: the session hangs, and its
// calls would wait for their deadlines), the work in flight on it fails at
// once with ErrSessionLost; otherwise each finishes on its own, promptly,
// and is judged by its own error (on an expired HTTP session, a request
// the server refused was never run and is replayed).
func (a *Actor) dropSession(cause error, answerNow bool) {
	slog.Warn("mcp session lost", "connection", a.conn.ID, "generation", a.generation, "err", Redact(a.conn, cause.Error()))
	if !a.openedAt.IsZero() && a.clock.Now().Sub(a.openedAt) >= a.opts.Policy.StablePeriod {
		a.backoff.Reset() // it was stable: start again from the minimum
	}
	if answerNow {
		for run, f := range a.running {
			if f.attempt != a.attempt {
				continue
			}
			delete(a.running, run)
			f.cancel()
			a.answerLost(f, cause)
		}
	}
	go closeSession(a.session, a.transport, a.end, a.opts.CloseTimeout)
	a.session, a.transport, a.end = nil, nil, nil
	if a.keepTimer != nil {
		a.keepTimer.Stop()
	}
	a.pinging = false
	a.failed(cause)
}

// answerLost fails work that was in flight on a session that died.
func (a *Actor) answerLost(f *inflight, cause error) {
	err := fmt.Errorf("%w: connection %q: session generation %d ended during %s, which may or may not have run: %s",
		ErrSessionLost, a.conn.ID, f.gen, f.w.what(), Redact(a.conn, cause.Error()))
	if f.w.list != nil {
		a.refresh.running = false
		f.w.fail(err)
		return
	}
	f.w.answer(ToolResult{CorrelationID: correlationOf(f.w), Err: err, Generation: f.gen})
}

func correlationOf(w work) uint64 {
	if w.call != nil {
		return w.call.CorrelationID
	}
	return w.read.CorrelationID
}

func (a *Actor) onCallDone(m callDone) {
	f, ok := a.running[m.run]
	if !ok {
		return // answered already: its session was lost
	}
	delete(a.running, m.run)
	r := m.result
	r.Generation = f.gen
	current := f.attempt == a.attempt && a.session != nil
	switch classify(m.rpcErr, f.transport) {
	case failNone, failProtocol:
		a.lastSuccess = a.clock.Now()
		f.w.answer(r)
	case failDeadline:
		f.w.answer(r)
	case failUnsent:
		if !f.w.replayed {
			a.replay(f.w, m.rpcErr, current)
			return
		}
		a.answerLost(f, m.rpcErr)
		if current {
			a.dropSession(m.rpcErr, false)
		}
	case failLost:
		a.answerLost(f, m.rpcErr)
		if current {
			a.dropSession(m.rpcErr, false)
		}
	}
	a.drain()
}

// replay sends work again, first in line, on a fresh session: the server
// refused it for an unknown session (HTTP 404 or 400, as after an upstream
// restart), or it never reached the server, so it never ran and a replay
// cannot repeat a side effect. Work that failed any other way is not
// replayed: whether it ran is unknown.
func (a *Actor) replay(w work, cause error, current bool) {
	if a.degraded {
		w.fail(a.degradedError())
		return
	}
	w.replayed = true
	a.queue = append([]work{w}, a.queue...)
	a.scheduleSweep(w.deadline())
	if current {
		a.dropSession(cause, false) // arranges the session the replay runs on
	}
	a.drain()
}

func (a *Actor) onListDone(m listDone) {
	f, ok := a.running[m.run]
	if !ok {
		return
	}
	delete(a.running, m.run)
	a.refresh.running = false
	failure := classify(m.rpcErr, f.transport)
	if m.result.Err == nil {
		a.listedAt, a.lastSuccess = a.clock.Now(), a.clock.Now()
		if a.opts.CatalogMaxAge > 0 {
			a.after(&a.staleTimer, a.opts.CatalogMaxAge, catalogStale{attempt: a.attempt})
		}
	}
	if req := f.w.list; req.Reply != nil {
		req.Reply(m.result)
	} else if m.result.Err == nil {
		a.notifyParent(m.result)
	}
	if (failure == failUnsent || failure == failLost) && f.attempt == a.attempt && a.session != nil {
		a.dropSession(m.rpcErr, false)
		return
	}
	if a.refresh.due {
		a.refresh.due = false
		a.admit(work{list: &ListCatalog{Deadline: a.clock.Now().Add(a.opts.CallTimeout)}})
	}
	a.drain()
}

func (a *Actor) onToolsChanged() {
	if a.state != StateOpen {
		return
	}
	if a.refresh.running {
		a.refresh.due = true
		return
	}
	a.admit(work{list: &ListCatalog{Deadline: a.clock.Now().Add(a.opts.CallTimeout)}})
}

// ping checks, every KeepAlive, that the session answers; a ping that
// fails ends the session.
func (a *Actor) ping(attempt int) {
	if attempt != a.attempt || a.session == nil || a.pinging {
		return
	}
	a.pinging = true
	engine, self, cs := a.engine, a.self, a.session
	ctx, cancel := context.WithTimeout(a.ctx, max(a.opts.KeepAlive/2, time.Millisecond))
	go func() {
		defer cancel()
		engine.Send(self, pinged{attempt: attempt, err: cs.Ping(ctx, nil)})
	}()
}

func (a *Actor) onPinged(m pinged) {
	if m.attempt != a.attempt || a.session == nil {
		return
	}
	a.pinging = false
	switch {
	case m.err == nil:
		a.lastSuccess = a.clock.Now()
	case errors.Is(m.err, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound}):
		return // the server does not answer pings: stop pinging
	default:
		a.dropSession(fmt.Errorf("keepalive failed: %w", m.err), true)
		return
	}
	a.after(&a.keepTimer, a.opts.KeepAlive, keepaliveDue{attempt: m.attempt})
}

// start runs w on the open session in a goroutine.
func (a *Actor) start(w work) {
	run := a.nextRun
	a.nextRun++
	deadline := w.deadline()
	if deadline.IsZero() {
		deadline = time.Now().Add(a.opts.CallTimeout)
	}
	ctx, cancel := context.WithDeadline(a.ctx, deadline)
	a.running[run] = &inflight{w: w, cancel: cancel, attempt: a.attempt, gen: a.generation, transport: a.transport}
	engine, self, cs, connID := a.engine, a.self, a.session, a.conn.ID
	if w.list != nil {
		a.refresh.running = true
		go func() {
			defer cancel()
			snap, err := listCatalog(ctx, cs, connID)
			engine.Send(self, listDone{run: run, result: CatalogListed{Snapshot: snap, Err: err}, rpcErr: err})
		}()
		return
	}
	go func() {
		defer cancel()
		var result ToolResult
		var rpcErr error
		if w.call != nil {
			result, rpcErr = callTool(ctx, cs, *w.call)
		} else {
			result, rpcErr = readResource(ctx, cs, *w.read)
		}
		engine.Send(self, callDone{run: run, result: result, rpcErr: rpcErr})
	}()
}

func (a *Actor) notifyParent(m CatalogListed) {
	if a.parent != nil {
		a.engine.Send(a.parent, m)
	}
}

// status is the actor's live status.
func (a *Actor) status() Status {
	now := a.clock.Now()
	st := Status{
		Connection: a.conn.ID, State: a.state, Generation: a.generation, SessionsOpened: a.opened, Restarts: a.restarts,
		CallsInFlight: len(a.running), CallsQueued: len(a.queue),
		LastError: a.lastErr, LastErrorAt: a.lastErrAt, LastSuccessAt: a.lastSuccess, ChangedAt: a.changedAt,
		RecentRestarts: a.intensity.Recent(now),
	}
	if a.state == StateBackoff || a.state == StateDegraded {
		st.NextAttemptAt = a.nextTry
	}
	return st
}

// setState changes the state and reports the status to the parent.
func (a *Actor) setState(s State) {
	a.state = s
	a.changedAt = a.clock.Now()
	if a.parent == nil {
		return
	}
	// The sender tells the parent which incarnation reports.
	a.engine.SendWithSender(a.parent, a.status(), a.self)
}

// shutdown cancels every call and connect, fails running and queued work
// and closes the session within CloseTimeout, killing the peer if it
// overruns. A connect in progress is cancelled and waited for (within
// CloseTimeout), so that whatever it started is ended before the actor is
// gone. Running work is answered here: its own completion message would
// reach a stopped actor and be dropped.
func (a *Actor) shutdown() {
	if a.cancel == nil {
		return // never started
	}
	a.cancel()
	for _, t := range []Timer{a.retryTimer, a.keepTimer, a.staleTimer, a.sweepTimer} {
		if t != nil {
			t.Stop()
		}
	}
	a.lease.Release()
	err := fmt.Errorf("connection %q: %w: shutting down", a.conn.ID, ErrUnavailable)
	for _, f := range a.running {
		f.w.fail(err)
	}
	a.running = nil
	a.failQueue(err)
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
