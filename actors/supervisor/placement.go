package supervisor

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/session"
)

// Placement decides, in a cluster, which node holds each connection's
// shared session (docs/cluster.md): the node whose lease on the
// connection is live. On one node there is none, and every session is
// the node's own.
type Placement interface {
	// Place finds the owner of conn's shared session within ctx, taking
	// the connection for this node when nobody holds it and it belongs
	// here; passed says another node sent the connection's message here
	// to be served, which this node then does if the connection may run
	// here.
	Place(ctx context.Context, conn config.Connection, passed bool) (Placed, error)
	// Release ends this node's tenure of connection id within ctx (the
	// connection was removed, or the node stops), so that another node
	// may take it at once.
	Release(ctx context.Context, id string) error
}

// Placed is where a connection's shared session lives.
type Placed struct {
	// Tenure is set when this node owns the connection: its session
	// actor runs under it.
	Tenure session.Tenure
	// Otherwise Owner is the node that owns the connection (or, for a
	// connection pinned to other nodes and owned by none, the node that
	// should take it), and Supervisor that node's supervisor, which is
	// sent the connection's messages.
	Owner      string
	Supervisor *actor.PID
	// Until is how long the answer may be trusted, on the local clock:
	// the connection is placed again after it.
	Until time.Time
}

// TenureEnded tells the supervisor that its node's tenure of Connection
// has ended: the lease was lost (the node was cut off from the database
// or paused past its ttl, and another node may own the connection now).
// The session actor of that tenure stops, and the connection is placed
// again on its next use.
type TenureEnded struct {
	Connection string
	Epoch      int64
}

// NodeLeft tells the supervisor that Node left the cluster: its node lease
// expired (it died, or was paused or cut off past its ttl). The calls
// passed to it will get no answer: they fail as calls whose session was
// lost, since whether they ran is unknown. The connections it owned are
// placed again on their next use.
type NodeLeft struct {
	Node string
}

// maxForwarded bounds the calls in flight passed to one node that the
// supervisor remembers, to fail them if the node leaves; past it the
// oldest are forgotten (and fail at their own deadline instead). Answers
// go straight to the callers, so a call is remembered until its deadline.
const maxForwarded = 4096

// passed is a call passed to another node, until it is answered there or
// its deadline passes.
type passed struct {
	reply    reply.Address
	deadline time.Time
	what     string
}

// maxHops bounds how many supervisors a message passes through: the
// first sends it to the owner it knows; the owner, if it lost the
// connection meanwhile, places it again and passes it once more at most.
const maxHops = 2

// placeTimeout bounds one placement (a lease read or acquisition).
const placeTimeout = 5 * time.Second

// remoteOwner is another node that owns a connection, as last placed.
type remoteOwner struct {
	node       string
	supervisor *actor.PID
	until      time.Time
}

// placing is a placement in progress, and the messages that wait for it.
type placing struct {
	token   uint64
	waiting []any
}

// placed is the answer of a placement goroutine.
type placed struct {
	connection string
	token      uint64
	result     Placed
	err        error
}

// routed deals with msg, a message for connection id's shared session,
// when the session is not this node's: it passes msg to the owning node's
// supervisor, or queues it while the owner is found. It returns false when
// msg is to be served here: on one node, or when this node owns the
// connection.
func (a *Actor) routed(c *actor.Context, id string, msg any) bool {
	if a.opts.Placement == nil {
		return false
	}
	if t := a.tenures[id]; t != nil {
		if t.Valid() {
			return false
		}
		// Ended by the node's own clock (it was paused, say), before its
		// keeper said so: the connection is placed again rather than the
		// message refused.
		a.endTenure(id, t.Epoch())
	}
	conn, ok := a.conns[id]
	if !ok || !conn.IsEnabled() {
		return false // answered here: unknown or disabled
	}
	if o, ok := a.owners[id]; ok && a.clock.Now().Before(o.until) {
		a.forward(c, o, msg)
		return true
	}
	switch msg.(type) {
	case session.CancelCalls, session.AnswerUpstream:
		return true // calls can only be in flight where an owner was known
	}
	p := a.placing[id]
	if p == nil {
		a.lastPlacing++
		p = &placing{token: a.lastPlacing}
		a.placing[id] = p
		a.place(conn, p.token, hopsOf(msg) > 0)
	}
	if len(p.waiting) >= a.opts.Session.MaxQueued {
		a.failRouted(msg, fmt.Errorf("connection %q: %w: %d messages wait for the connection's owner to be found",
			id, session.ErrOverloaded, len(p.waiting)))
		return true
	}
	p.waiting = append(p.waiting, msg)
	return true
}

// place finds conn's owner off the inbox; the answer comes back as placed.
func (a *Actor) place(conn config.Connection, token uint64, passed bool) {
	engine, self, placement := a.engine, a.self, a.opts.Placement
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), placeTimeout)
		defer cancel()
		r, err := placement.Place(ctx, conn, passed)
		engine.Send(self, placed{connection: conn.ID, token: token, result: r, err: err})
	}()
}

// onPlaced keeps where a connection's session lives and lets the messages
// that waited for it through again.
func (a *Actor) onPlaced(c *actor.Context, m placed) {
	p := a.placing[m.connection]
	if p == nil || p.token != m.token {
		return
	}
	delete(a.placing, m.connection)
	if m.err != nil {
		err := fmt.Errorf("connection %q: %w: no node could be found to hold its session: %w", m.connection, session.ErrUnavailable, m.err)
		slog.Warn("connection not placed", "connection", m.connection, "err", m.err)
		for _, msg := range p.waiting {
			a.failRouted(msg, err)
		}
		return
	}
	if m.result.Tenure != nil {
		a.tenures[m.connection] = m.result.Tenure
		delete(a.owners, m.connection)
		slog.Info("connection owned here", "connection", m.connection, "epoch", m.result.Tenure.Epoch())
	} else {
		a.owners[m.connection] = remoteOwner{node: m.result.Owner, supervisor: m.result.Supervisor, until: m.result.Until}
	}
	for _, msg := range p.waiting {
		a.handle(c, msg)
	}
}

// forward passes msg to the supervisor of the node that owns its
// connection, one hop further; past maxHops it fails instead.
func (a *Actor) forward(c *actor.Context, o remoteOwner, msg any) {
	hops := hopsOf(msg)
	if hops >= maxHops {
		a.failRouted(msg, fmt.Errorf("%w: the connection changed hands while the message was passed between nodes (%d hops); try again",
			session.ErrUnavailable, hops))
		return
	}
	a.opts.Session.Metrics.ForwardedCall(o.node)
	switch m := msg.(type) {
	case RefreshCatalog:
		// The answer comes back here first: this node's catalogs get the
		// snapshot before its asker does, so that what the asker does
		// next here sees it.
		a.forgetStaleRefreshes()
		a.lastRefresh++
		a.refreshing[a.lastRefresh] = m
		m.Reply = reply.At(a.self, a.lastRefresh)
		msg = m
	case session.CallTool:
		a.remember(o.node, passed{reply: m.Reply, deadline: m.Deadline, what: "tool call " + m.Tool})
	case session.ReadResource:
		a.remember(o.node, passed{reply: m.Reply, deadline: m.Deadline, what: "resource read " + m.URI})
	case session.GetPrompt:
		a.remember(o.node, passed{reply: m.Reply, deadline: m.Deadline, what: "prompt " + m.Name})
	case session.Complete:
		a.remember(o.node, passed{reply: m.Reply, deadline: m.Deadline, what: "completion of " + m.Argument})
	}
	c.Send(o.supervisor, withHops(msg, hops+1))
}

// onRefreshed takes the answer of a refresh passed to another node: the
// snapshot it stored is published to this node's catalogs (the store has
// it already), and the answer goes on to the asker.
func (a *Actor) onRefreshed(m CatalogRefreshed) {
	req, ok := a.refreshing[m.CorrelationID]
	if !ok {
		return // forgotten: its asker gave up long ago
	}
	delete(a.refreshing, m.CorrelationID)
	if p, ok := a.catalogs.(Publisher); ok && m.Error == nil {
		p.Publish(m.Snapshot)
	}
	m.CorrelationID = req.Reply.Correlation
	reply.Send(a.engine, req.Reply, m)
}

// Publisher is what the supervisor's catalogs may also do: take a
// snapshot another node listed and stored, into this node's view.
type Publisher interface {
	Publish(snap catalog.Snapshot)
}

// remember keeps a call passed to node. Once maxForwarded are kept, those
// whose deadline passed are forgotten, and if more than half remain, the
// oldest of them down to half: a sweep every maxForwarded/2 calls at
// most, not one per call.
func (a *Actor) remember(node string, p passed) {
	list := a.forwarded[node]
	if len(list) >= maxForwarded {
		now := a.clock.Now()
		list = slices.DeleteFunc(list, func(q passed) bool { return !q.deadline.IsZero() && now.After(q.deadline) })
		if len(list) > maxForwarded/2 {
			list = slices.Delete(list, 0, len(list)-maxForwarded/2)
		}
	}
	a.forwarded[node] = append(list, p)
}

// onNodeLeft fails the calls in flight passed to a node that left, and
// forgets that it owned connections.
func (a *Actor) onNodeLeft(m NodeLeft) {
	now := a.clock.Now()
	lost := 0
	for _, p := range a.forwarded[m.Node] {
		if !p.deadline.IsZero() && now.After(p.deadline) {
			continue // failed at its deadline already
		}
		err := fmt.Errorf("%w: node %s, which held the connection's session, left the cluster during the %s, which may or may not have run",
			session.ErrSessionLost, m.Node, p.what)
		reply.Send(a.engine, p.reply, session.ToolResult{CorrelationID: p.reply.Correlation, Error: reply.Fail(err)})
		lost++
	}
	delete(a.forwarded, m.Node)
	for id, o := range a.owners {
		if o.node == m.Node {
			delete(a.owners, id)
		}
	}
	slog.Warn("cluster node left", "node", m.Node, "calls_lost", lost)
}

// onTenureEnded stops the session actor of a tenure that ended and
// forgets the tenure: the connection is placed again on its next use.
func (a *Actor) onTenureEnded(m TenureEnded) { a.endTenure(m.Connection, m.Epoch) }

// endTenure forgets tenure epoch of connection id, if it is the one held,
// and stops its session actor.
func (a *Actor) endTenure(id string, epoch int64) {
	t := a.tenures[id]
	if t == nil || t.Epoch() != epoch {
		return
	}
	delete(a.tenures, id)
	slog.Warn("connection no longer owned here: its session stops", "connection", id, "epoch", epoch)
	if s, ok := a.stopChild(id); ok {
		a.awaitStops([]stopping{s}, nil, time.Time{})
	}
}

// release ends this node's tenure of the connections ids off the inbox,
// so that other nodes may take them at once.
func (a *Actor) release(ids []string) {
	if a.opts.Placement == nil {
		return
	}
	var owned []string
	for _, id := range ids {
		if a.tenures[id] != nil {
			owned = append(owned, id)
			delete(a.tenures, id)
		}
		delete(a.owners, id)
	}
	if len(owned) == 0 {
		return
	}
	placement := a.opts.Placement
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), placeTimeout)
		defer cancel()
		for _, id := range owned {
			if err := placement.Release(ctx, id); err != nil {
				slog.Warn("connection lease not released; it expires by itself", "connection", id, "err", err)
			}
		}
	}()
}

// hopsOf is how many supervisors passed msg on.
func hopsOf(msg any) int {
	switch m := msg.(type) {
	case session.CallTool:
		return m.Hops
	case session.ReadResource:
		return m.Hops
	case session.GetPrompt:
		return m.Hops
	case session.Complete:
		return m.Hops
	case session.CancelCalls:
		return m.Hops
	case session.AnswerUpstream:
		return m.Hops
	case RefreshCatalog:
		return m.Hops
	}
	return 0
}

// withHops is msg passed on hops times.
func withHops(msg any, hops int) any {
	switch m := msg.(type) {
	case session.CallTool:
		m.Hops = hops
		return m
	case session.ReadResource:
		m.Hops = hops
		return m
	case session.GetPrompt:
		m.Hops = hops
		return m
	case session.Complete:
		m.Hops = hops
		return m
	case session.CancelCalls:
		m.Hops = hops
		return m
	case session.AnswerUpstream:
		m.Hops = hops
		return m
	case RefreshCatalog:
		m.Hops = hops
		return m
	}
	return msg
}

// failRouted answers msg with err.
func (a *Actor) failRouted(msg any, err error) {
	switch m := msg.(type) {
	case session.CallTool:
		reply.Send(a.engine, m.Reply, session.ToolResult{CorrelationID: m.Reply.Correlation, Error: reply.Fail(err)})
	case session.ReadResource:
		reply.Send(a.engine, m.Reply, session.ToolResult{CorrelationID: m.Reply.Correlation, Error: reply.Fail(err)})
	case session.GetPrompt:
		reply.Send(a.engine, m.Reply, session.ToolResult{CorrelationID: m.Reply.Correlation, Error: reply.Fail(err)})
	case session.Complete:
		reply.Send(a.engine, m.Reply, session.ToolResult{CorrelationID: m.Reply.Correlation, Error: reply.Fail(err)})
	case RefreshCatalog:
		reply.Send(a.engine, m.Reply, CatalogRefreshed{CorrelationID: m.Reply.Correlation, Error: reply.Fail(err)})
	}
}
