package session

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/reply"
)

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
	client    *mcp.Client // the open session's: its roots are the configured ones
	transport mcp.Transport
	end       context.CancelFunc // ends the session's transport context
	lease     *Lease             // the connect slot held or waited for
	handoffs  map[int]*handoff

	running map[uint64]*inflight // work in flight by run id
	nextRun uint64
	// asks are the requests the server sent during a call, handed to the
	// run that made it and waiting for its answer, by request id.
	asks     map[string]*ask
	nextAsk  uint64
	queue    []work
	refresh  struct{ running, due, debouncing bool }
	listedAt time.Time // when the catalog was last listed; zero before

	backoff   Backoff
	intensity *Intensity // the failed starts since a session last proved itself
	degraded  bool       // fail fast; a probe runs every ProbeInterval
	// degradedWhy says, in the degraded error, what degraded it.
	degradedWhy string
	// answered is set once the open session answered a call: it proved
	// itself (Policy.ProvedItself).
	answered bool
	// loginNeeded, once the source was found to need an OAuth login, is
	// what calls fail with (ErrNeedsLogin); loginHost is where to log in.
	loginNeeded error
	loginHost   string
	// probation is set while a session a probe opened has not proved
	// itself yet: if it dies unproven, the connection degrades again at
	// once.
	probation  bool
	retryToken int
	retryTimer Timer
	nextTry    time.Time
	pinging    bool
	missed     int // keepalive pings missed in a row
	keepTimer  Timer
	staleTimer Timer
	// debounceTimer ends the window in which list_changed notifications
	// are gathered into one re-list.
	debounceTimer Timer
	sweepTimer    Timer
	sweepAt       time.Time

	generation  int64
	opened      int
	restarts    int
	openedAt    time.Time
	lastErr     string
	lastErrAt   time.Time
	lastSuccess time.Time
	changedAt   time.Time

	// lost is the session that ended and whose replacement is not
	// announced yet; exitTimer bounds the wait for its exit report.
	lost      *lost
	exitTimer Timer

	// reportedCause is the cause of the last connect failure logged at
	// warn; "" once a session opens.
	reportedCause string
	// gauges are the actor's share of its connection's gauges.
	gauges *metrics.SessionGauges
	// taskOrigin is the open session's part of the TaskRef of each task
	// created on it (noteTaskOrigin).
	taskOrigin TaskRef
	// notices holds the progress and log notifications its sessions
	// received, until the actor takes them (notices.go); logs are the
	// newest log messages that were no call's (MaxConnectionLogs).
	notices *notices
	logs    []ConnectionLog
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
	defer a.observe()
	switch m := c.Message().(type) {
	case actor.Started:
		a.begin(c)
	case CallTool:
		a.admit(work{call: &m})
	case ListCatalog:
		a.admit(work{list: &m})
	case ReadResource:
		a.admit(work{read: &m})
	case GetPrompt:
		a.admit(work{prompt: &m})
	case Complete:
		a.admit(work{complete: &m})
	case CancelCalls:
		a.cancelCalls(m.Owner, m.KeepTasks)
	case AnswerUpstream:
		a.onAnswerUpstream(m)
	case SetClient:
		a.setClient(m)
	case asked:
		a.onAsked(m)
	case askGone:
		a.onAskGone(m)
	case GetStatus:
		reply.Send(a.engine, m.Reply, CurrentStatus{CorrelationID: m.Reply.Correlation, Status: a.status()})
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
			a.sessionEnded(m.err)
		}
	case peerGone:
		a.onPeerGone(m)
	case callDone:
		a.onCallDone(m)
	case noticed:
		a.onNoticed()
	case listDone:
		a.onListDone(m)
	case listChanged:
		a.onListChanged(m)
	case relistDue:
		a.onRelistDue(m)
	case retryDue:
		if m.token == a.retryToken && (a.state == StateBackoff || a.state == StateDegraded) {
			a.connect()
		}
	case replacedDue:
		a.onReplacedDue(m)
	case keepaliveDue:
		a.ping(m.attempt)
	case pinged:
		a.onPinged(m)
	case catalogStale:
		if m.attempt == a.attempt && a.clock.Now().Sub(a.listedAt) >= a.opts.CatalogMaxAge {
			a.relist()
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
	engine, self := a.engine, a.self
	a.notices = newNotices(func() { engine.Send(self, noticed{}) })
	a.running = map[uint64]*inflight{}
	a.asks = map[string]*ask{}
	a.backoff = Backoff{Policy: a.opts.Policy}
	prev := a.inc.Previous
	a.generation, a.opened, a.restarts = prev.Generation, prev.SessionsOpened, prev.Restarts
	a.lastErr, a.lastErrAt, a.lastSuccess = prev.LastError, prev.LastErrorAt, prev.LastSuccessAt
	a.intensity = NewIntensity(a.opts.Policy, prev.RecentRestarts)
	a.inherit()
	switch {
	case a.inc.Probe:
		a.degraded, a.degradedWhy = true, "its session actor crashed too often"
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

// status is the actor's live status.
func (a *Actor) status() Status {
	now := a.clock.Now()
	st := Status{
		Connection: a.conn.ID, State: a.state, Generation: a.generation, SessionsOpened: a.opened, Restarts: a.restarts,
		CallsInFlight: len(a.running), CallsQueued: len(a.queue), MissedPings: a.missed,
		LastError: a.lastErr, LastErrorAt: a.lastErrAt, LoginHost: a.loginHost, LastSuccessAt: a.lastSuccess, ChangedAt: a.changedAt,
		RecentRestarts: a.intensity.Recent(now), Logs: slices.Clone(a.logs),
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
	a.report()
}

// report sends the status to the parent.
func (a *Actor) report() {
	if a.parent == nil {
		return
	}
	// The sender tells the parent which incarnation reports.
	a.engine.SendWithSender(a.parent, a.status(), a.self)
}
