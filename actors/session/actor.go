package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
)

// Errors a call can fail with before reaching the upstream server.
var (
	ErrOverloaded  = errors.New("too many calls queued for this connection")
	ErrUnavailable = errors.New("connection unavailable")
	ErrDeadline    = errors.New("deadline passed before the call could start")
	ErrCancelled   = errors.New("call cancelled by its owner")
)

// Internal messages, sent by the actor's own goroutines.
type (
	connected struct {
		gen       int
		session   *mcp.ClientSession
		transport mcp.Transport
		err       error
	}
	closed struct {
		gen int
		err error
	}
	callDone struct {
		run    uint64
		gen    int
		work   work
		result ToolResult
	}
	listDone struct {
		run    uint64
		req    ListCatalog
		result CatalogListed
	}
	toolsChanged struct{ gen int }
	// reconnect retries a failed connect once its backoff has passed,
	// while the connection has never been listed.
	reconnect struct{ gen int }
	// catalogStale re-lists the catalog once it is CatalogMaxAge old.
	catalogStale struct{ gen int }
	// sweep fails queued work whose deadline has passed.
	sweep struct{}
)

// work is a call, a resource read or a catalog listing waiting for the
// session.
type work struct {
	call *CallTool
	read *ReadResource
	list *ListCatalog
	// replayed is set on a call sent again after the server refused it
	// for an unknown session; it is never sent a third time.
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

// Actor owns one upstream MCP session for one connection.
type Actor struct {
	conn    config.Connection
	factory TransportFactory
	opts    Options

	engine *actor.Engine
	self   *actor.PID
	parent *actor.PID

	state      State
	gen        int // increments per connect attempt; stale replies are ignored
	session    *mcp.ClientSession
	transport  mcp.Transport
	cancel     context.CancelFunc // cancels every in-flight call of this actor
	ctx        context.Context
	running    map[uint64]work // work in flight by run id; answered at shutdown if still running
	cancels    map[uint64]context.CancelFunc
	nextRun    uint64
	queue      []work
	failures   int
	retryAt    time.Time
	lastErr    error
	opened     int
	refreshing bool
	refreshDue bool
	// listedAt is when the catalog was last listed; zero before the
	// first listing.
	listedAt time.Time
	sweepAt  time.Time // when the next sweep of the queue is due; zero if none
	// reconnectTimer and staleTimer are the pending background reconnect
	// and catalog re-list.
	reconnectTimer, staleTimer *time.Timer
}

// New returns a producer of the session actor for conn.
func New(conn config.Connection, factory TransportFactory, opts Options) actor.Producer {
	return func() actor.Receiver {
		return &Actor{conn: conn, factory: factory, opts: opts, state: StateIdle}
	}
}

// Receive handles one message.
func (a *Actor) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case actor.Started:
		a.engine, a.self, a.parent = c.Engine(), c.PID(), c.Parent()
		a.ctx, a.cancel = context.WithCancel(context.Background())
	case CallTool:
		a.admit(work{call: &m})
	case ListCatalog:
		a.admit(work{list: &m})
	case ReadResource:
		a.admit(work{read: &m})
	case CancelCalls:
		a.cancelCalls(m.Owner)
	case connected:
		a.onConnected(m)
	case closed:
		a.onClosed(m)
	case callDone:
		delete(a.running, m.run)
		delete(a.cancels, m.run)
		if errors.Is(m.result.Err, mcp.ErrSessionMissing) && !m.work.replayed {
			a.replay(m)
			return
		}
		m.work.answer(m.result)
		a.drain()
	case listDone:
		delete(a.running, m.run)
		delete(a.cancels, m.run)
		a.refreshing = false
		if m.result.Err == nil {
			a.listedAt = time.Now()
			if a.opts.CatalogMaxAge > 0 {
				a.schedule(&a.staleTimer, a.opts.CatalogMaxAge, catalogStale{gen: a.gen})
			}
		}
		if m.req.Reply != nil {
			m.req.Reply(m.result)
		} else if m.result.Err == nil {
			a.notifyParent(m.result)
		}
		if a.refreshDue {
			a.refreshDue = false
			a.admit(work{list: &ListCatalog{Deadline: time.Now().Add(a.opts.CallTimeout)}})
		}
		a.drain()
	case toolsChanged:
		if m.gen == a.gen {
			a.onToolsChanged()
		}
	case reconnect:
		if m.gen == a.gen && a.state == StateBackoff {
			a.connect()
		}
	case catalogStale:
		if m.gen == a.gen && time.Since(a.listedAt) >= a.opts.CatalogMaxAge {
			a.onToolsChanged()
		}
	case sweep:
		a.sweepQueue()
	case actor.Stopped:
		for _, t := range []*time.Timer{a.reconnectTimer, a.staleTimer} {
			if t != nil {
				t.Stop()
			}
		}
		a.shutdown()
	}
}

// admit starts w now, queues it, or refuses it.
func (a *Actor) admit(w work) {
	switch {
	case !w.deadline().IsZero() && time.Now().After(w.deadline()):
		w.fail(fmt.Errorf("connection %q: %w", a.conn.ID, ErrDeadline))
		return
	case a.state == StateBackoff && time.Now().Before(a.retryAt):
		w.fail(fmt.Errorf("connection %q: %w: %v (retry after %s)", a.conn.ID, ErrUnavailable, a.lastErr, time.Until(a.retryAt).Round(time.Millisecond)))
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
	if a.state == StateIdle || a.state == StateBackoff {
		a.connect()
	}
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

// schedule replaces the timer *t with one that sends msg to the actor
// once d has passed; the timers stop with the actor.
func (a *Actor) schedule(t **time.Timer, d time.Duration, msg any) {
	if *t != nil {
		(*t).Stop()
	}
	engine, self := a.engine, a.self
	*t = time.AfterFunc(d, func() { engine.Send(self, msg) })
}

// scheduleSweep makes sure the queue is swept by deadline d, so queued
// work fails when its own deadline passes, not only when it leaves the
// queue.
func (a *Actor) scheduleSweep(d time.Time) {
	if d.IsZero() || (!a.sweepAt.IsZero() && !d.Before(a.sweepAt)) {
		return
	}
	a.sweepAt = d
	engine, self := a.engine, a.self
	time.AfterFunc(time.Until(d), func() { engine.Send(self, sweep{}) })
}

// sweepQueue fails queued work past its deadline and schedules the next
// sweep.
func (a *Actor) sweepQueue() {
	a.sweepAt = time.Time{}
	now, next := time.Now(), time.Time{}
	kept := a.queue[:0]
	for _, w := range a.queue {
		d := w.deadline()
		switch {
		case !d.IsZero() && !now.Before(d):
			w.fail(fmt.Errorf("connection %q: %w (waited in the queue)", a.conn.ID, ErrDeadline))
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

// drain starts queued work while the session has free slots.
func (a *Actor) drain() {
	for a.state == StateOpen && len(a.running) < a.opts.MaxInFlight && len(a.queue) > 0 {
		w := a.queue[0]
		a.queue[0] = work{}
		a.queue = a.queue[1:]
		if d := w.deadline(); !d.IsZero() && time.Now().After(d) {
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
	for run, w := range a.running {
		if w.owner() == owner {
			a.cancels[run]()
		}
	}
}

// failQueue fails every queued call with err.
func (a *Actor) failQueue(err error) {
	for _, w := range a.queue {
		w.fail(err)
	}
	a.queue = nil
}

// connect opens the upstream session in a goroutine.
func (a *Actor) connect() {
	a.gen++
	gen, conn, opts := a.gen, a.conn, a.opts
	a.setState(StateConnecting, nil)
	engine, self := a.engine, a.self
	client := a.newClient(gen)
	go func() {
		t, err := a.factory.NewTransport(conn)
		if err != nil {
			engine.Send(self, connected{gen: gen, err: fmt.Errorf("transport: %w", err)})
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), opts.ConnectTimeout)
		defer cancel()
		cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: opts.ProtocolVersion})
		if err != nil {
			if k, ok := t.(Killer); ok {
				_ = k.Kill()
			}
			err = fmt.Errorf("connect: %w", err)
		}
		engine.Send(self, connected{gen: gen, session: cs, transport: t, err: err})
	}()
}

// newClient builds the go-sdk client of one connect attempt. It advertises
// no client capabilities (mcpflow serves no roots, sampling or
// elicitation), and forwards tools/list_changed to the actor.
func (a *Actor) newClient(gen int) *mcp.Client {
	engine, self := a.engine, a.self
	return mcp.NewClient(&mcp.Implementation{Name: "mcpflow", Version: "0.1.0"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		KeepAlive:    a.opts.KeepAlive,
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			engine.Send(self, toolsChanged{gen: gen})
		},
	})
}

func (a *Actor) onConnected(m connected) {
	if m.gen != a.gen {
		if m.session != nil {
			go closeSession(m.session, m.transport, a.opts.CloseTimeout)
		}
		return
	}
	if m.err != nil {
		a.failures++
		a.retryAt = time.Now().Add(a.opts.backoff(a.failures))
		a.setState(StateBackoff, m.err)
		a.failQueue(fmt.Errorf("connection %q: %w: %v", a.conn.ID, ErrUnavailable, m.err))
		if a.listedAt.IsZero() && a.opts.CatalogMaxAge > 0 {
			// Never listed: keep trying in the background, so that a
			// source down at start gets its catalog once it is up.
			a.schedule(&a.reconnectTimer, time.Until(a.retryAt), reconnect{gen: a.gen})
		}
		slog.Warn("mcp connect failed", "connection", a.conn.ID, "attempt", a.failures, "err", m.err)
		return
	}
	a.failures = 0
	a.session, a.transport = m.session, m.transport
	a.opened++
	a.setState(StateOpen, nil)
	slog.Info("mcp session open", "connection", a.conn.ID, "session", a.opened)
	if a.opts.CatalogMaxAge > 0 && time.Since(a.listedAt) >= a.opts.CatalogMaxAge && !a.listQueued() {
		a.onToolsChanged() // never listed, or stale: list it now
	}
	engine, self, gen, cs := a.engine, a.self, a.gen, m.session
	go func() { engine.Send(self, closed{gen: gen, err: cs.Wait()}) }()
	a.drain()
}

func (a *Actor) onClosed(m closed) {
	if m.gen != a.gen || a.session == nil {
		return
	}
	err := m.err
	if err == nil {
		err = errors.New("session closed by the server")
	}
	a.dropSession(err)
}

// dropSession lets go of a dead session: it is closed in the background,
// and queued work opens a new one.
func (a *Actor) dropSession(cause error) {
	slog.Warn("mcp session closed", "connection", a.conn.ID, "err", cause)
	go closeSession(a.session, a.transport, a.opts.CloseTimeout)
	a.session, a.transport = nil, nil
	a.setState(StateIdle, cause)
	if len(a.queue) > 0 {
		a.connect()
	}
}

// replay sends a call again, first in line, on a fresh session: the server
// answered that it no longer knows the session (a streamable HTTP 404, as
// after an upstream restart), so it never ran the call and a replay cannot
// repeat a side effect. Calls that failed any other way are not replayed:
// whether they ran is unknown.
func (a *Actor) replay(m callDone) {
	if a.state == StateBackoff {
		m.work.answer(m.result) // no session to replay on until the backoff ends
		return
	}
	w := m.work
	w.replayed = true
	a.queue = append([]work{w}, a.queue...)
	switch {
	case m.gen == a.gen && a.session != nil:
		a.dropSession(m.result.Err) // connects for the queued replay
	case a.state == StateIdle:
		a.connect()
	}
	a.drain()
}

func (a *Actor) onToolsChanged() {
	if a.state != StateOpen {
		return
	}
	if a.refreshing {
		a.refreshDue = true
		return
	}
	a.admit(work{list: &ListCatalog{Deadline: time.Now().Add(a.opts.CallTimeout)}})
}

// start runs w on the open session in a goroutine.
func (a *Actor) start(w work) {
	if a.running == nil {
		a.running = map[uint64]work{}
	}
	run := a.nextRun
	a.nextRun++
	a.running[run] = w
	deadline := w.deadline()
	if deadline.IsZero() {
		deadline = time.Now().Add(a.opts.CallTimeout)
	}
	engine, self, cs, ctx, connID, gen := a.engine, a.self, a.session, a.ctx, a.conn.ID, a.gen
	if w.call != nil || w.read != nil {
		ctx, cancel := context.WithDeadline(ctx, deadline)
		if a.cancels == nil {
			a.cancels = map[uint64]context.CancelFunc{}
		}
		a.cancels[run] = cancel
		go func() {
			defer cancel()
			var result ToolResult
			if w.call != nil {
				result = callTool(ctx, cs, *w.call)
			} else {
				result = readResource(ctx, cs, *w.read)
			}
			engine.Send(self, callDone{run: run, gen: gen, work: w, result: result})
		}()
		return
	}
	a.refreshing = true
	req := *w.list
	go func() {
		ctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		snap, err := listCatalog(ctx, cs, connID)
		engine.Send(self, listDone{run: run, req: req, result: CatalogListed{Snapshot: snap, Err: err}})
	}()
}

func (a *Actor) notifyParent(m CatalogListed) {
	if a.parent != nil {
		a.engine.Send(a.parent, m)
	}
}

func (a *Actor) setState(s State, err error) {
	a.state = s
	a.lastErr = err
	if a.parent == nil {
		return
	}
	st := Status{Connection: a.conn.ID, State: s, SessionsOpened: a.opened, CallsInFlight: len(a.running), ChangedAt: time.Now()}
	if err != nil {
		st.LastError = err.Error()
	}
	// The sender tells the parent which incarnation reports.
	a.engine.SendWithSender(a.parent, st, a.self)
}

// shutdown cancels every call, fails running and queued work and closes
// the session within CloseTimeout, killing the peer if it overruns. Running
// work is answered here: its own completion message would reach a stopped
// actor and be dropped.
func (a *Actor) shutdown() {
	a.cancel()
	err := fmt.Errorf("connection %q: %w: shutting down", a.conn.ID, ErrUnavailable)
	for _, w := range a.running {
		w.fail(err)
	}
	a.running = nil
	a.failQueue(err)
	if a.session != nil {
		closeSession(a.session, a.transport, a.opts.CloseTimeout)
		a.session = nil
	}
}

// closeSession closes cs gracefully, or kills the transport's peer when the
// close does not finish within timeout.
func closeSession(cs *mcp.ClientSession, t mcp.Transport, timeout time.Duration) {
	done := make(chan struct{})
	go func() {
		_ = cs.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(timeout):
		if k, ok := t.(Killer); ok {
			_ = k.Kill()
		}
		<-done
	}
}

// callTool performs one call and projects its result: structuredContent
// when the tool returns an object, else {"content": [...]}.
func callTool(ctx context.Context, cs *mcp.ClientSession, call CallTool) ToolResult {
	args := call.Arguments
	if args == nil {
		args = map[string]any{}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: call.Tool, Arguments: args})
	if err != nil {
		return ToolResult{CorrelationID: call.CorrelationID, Err: fmt.Errorf("call %s.%s: %w", call.Connection, call.Tool, err)}
	}
	outcome := "ok"
	if res.IsError {
		outcome = "error"
	}
	output, err := projectOutput(res)
	if err != nil {
		return ToolResult{CorrelationID: call.CorrelationID, Err: fmt.Errorf("call %s.%s: %w", call.Connection, call.Tool, err)}
	}
	return ToolResult{CorrelationID: call.CorrelationID, Outcome: outcome, Output: output}
}

// readResource reads one resource on an open session.
func readResource(ctx context.Context, cs *mcp.ClientSession, req ReadResource) ToolResult {
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: req.URI})
	if err == nil {
		var out map[string]any
		if out, err = toObject(res); err == nil {
			return ToolResult{CorrelationID: req.CorrelationID, Outcome: "ok", Output: out}
		}
	}
	return ToolResult{CorrelationID: req.CorrelationID, Err: fmt.Errorf("read %s of %s: %w", req.URI, req.Connection, err)}
}

func projectOutput(res *mcp.CallToolResult) (map[string]any, error) {
	if res.StructuredContent != nil {
		if m, err := toObject(res.StructuredContent); err == nil {
			return m, nil
		}
	}
	content := res.Content
	if content == nil {
		content = []mcp.Content{}
	}
	// Encode through JSON (not a map holding SDK types), so that the output
	// is plain JSON values like structured content.
	return toObject(struct {
		Content []mcp.Content `json:"content"`
	}{content})
}

// toObject normalises v to a JSON object.
func toObject(v any) (map[string]any, error) {
	if m, ok := v.(map[string]any); ok {
		return m, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode tool output: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("tool output is not an object: %w", err)
	}
	return m, nil
}

// listCatalog lists tools, and resources and prompts where the server
// offers them.
func listCatalog(ctx context.Context, cs *mcp.ClientSession, connID string) (catalog.Snapshot, error) {
	snap := catalog.Snapshot{ConnectionID: connID, FetchedAtEpochMs: time.Now().UnixMilli(), MaxAgeSeconds: catalog.DefaultMaxAgeSeconds,
		Tools: []catalog.Tool{}, Resources: []catalog.Resource{}, Prompts: []catalog.Prompt{}}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return catalog.Snapshot{}, fmt.Errorf("list tools of %q: %w", connID, err)
		}
		tool := catalog.Tool{Name: t.Name, Title: t.Title, Description: t.Description}
		if a := t.Annotations; a != nil {
			if a.Title != "" {
				tool.Title = a.Title
			}
			tool.ReadOnly = a.ReadOnlyHint
			tool.Idempotent = a.IdempotentHint
		}
		var err error
		if tool.InputSchema, err = schemaObject(t.InputSchema); err != nil {
			return catalog.Snapshot{}, fmt.Errorf("tool %q input schema: %w", t.Name, err)
		}
		if tool.OutputSchema, err = schemaObject(t.OutputSchema); err != nil {
			return catalog.Snapshot{}, fmt.Errorf("tool %q output schema: %w", t.Name, err)
		}
		snap.Tools = append(snap.Tools, tool)
	}
	caps := cs.InitializeResult().Capabilities
	if caps != nil && caps.Resources != nil {
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				return catalog.Snapshot{}, fmt.Errorf("list resources of %q: %w", connID, err)
			}
			snap.Resources = append(snap.Resources, catalog.Resource{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType})
		}
	}
	if caps != nil && caps.Prompts != nil {
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				return catalog.Snapshot{}, fmt.Errorf("list prompts of %q: %w", connID, err)
			}
			snap.Prompts = append(snap.Prompts, catalog.Prompt{Name: p.Name, Title: p.Title, Description: p.Description})
		}
	}
	return snap, nil
}

func schemaObject(s any) (map[string]any, error) {
	if s == nil {
		return nil, nil
	}
	return toObject(s)
}
