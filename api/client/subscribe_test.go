package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/edge"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// feed is how the test edge answers a subscription to one run: the
// reply, then, once the reply is queued, the notifications notes makes
// for the subscription id.
type feed struct {
	hold     chan struct{} // when set, the reply waits until it is closed
	inactive bool          // the reply says no event follows
	notes    func(sub string) []Notification
}

// released is the context key of the channel closed once a request's
// reply is queued (edge.Options.RequestContext).
type released struct{}

// subEdge serves workflow.runs.subscribe and workflow.admin.events.subscribe
// from feeds (by run id; "admin" for the admin log), and their
// unsubscribes, over a real edge.
type subEdge struct {
	feeds map[string]*feed

	mu sync.Mutex
	n  int
	// pushed has, by subscription, a channel closed once its feed's
	// notifications are queued: an unsubscribe is answered after them,
	// as a server sends nothing of a subscription once it has answered
	// its unsubscribe.
	pushed map[string]chan struct{}
	// pushers are the goroutines pushing a feed's notifications.
	pushers sync.WaitGroup
	// unsubscribed gets the id of each subscription unsubscribed; before
	// answering, the edge pushes one more event of it (a notification in
	// flight when the client gave up).
	unsubscribed chan string
}

// startSubs serves feeds on a real edge and dials it.
func startSubs(t *testing.T, feeds map[string]*feed) (*Client, *subEdge) {
	t.Helper()
	e := &subEdge{feeds: feeds, pushed: map[string]chan struct{}{}, unsubscribed: make(chan string, 16)}
	t.Cleanup(e.pushers.Wait) // after the client and the edge have closed
	opts := edge.DefaultOptions()
	opts.RequestContext = func(ctx context.Context, _ *edge.Conn) (context.Context, func()) {
		done := make(chan struct{})
		var once sync.Once
		return context.WithValue(ctx, released{}, done), func() { once.Do(func() { close(done) }) }
	}
	c, _, _ := startWith(t, map[string]rpc.Handler{
		p.MethodRunsSubscribe: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var ps p.SubscribeRunParams
			if err := json.Unmarshal(raw, &ps); err != nil {
				return nil, err
			}
			return e.subscribe(ctx, ps.RunID)
		},
		p.MethodAdminEventsSubscribe: func(ctx context.Context, _ json.RawMessage) (any, error) {
			return e.subscribe(ctx, "admin")
		},
		p.MethodRunsUnsubscribe:        e.unsubscribe,
		p.MethodAdminEventsUnsubscribe: e.unsubscribe,
	}, opts)
	return c, e
}

func (e *subEdge) subscribe(ctx context.Context, run string) (any, error) {
	f, ok := e.feeds[run]
	if !ok {
		return nil, jsonrpc.Failed("KeyError", "run '"+run+"' not found")
	}
	if f.hold != nil {
		select {
		case <-f.hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	e.mu.Lock()
	e.n++
	sub := fmt.Sprintf("sub_%d", e.n)
	pushed := make(chan struct{})
	e.pushed[sub] = pushed
	e.mu.Unlock()
	if f.notes == nil {
		close(pushed)
	} else {
		conn, done := edge.ConnFrom(ctx), ctx.Value(released{}).(chan struct{})
		e.pushers.Add(1)
		go func() {
			defer e.pushers.Done()
			defer close(pushed)
			select {
			case <-done:
			case <-conn.Done():
				return
			}
			push(conn, f.notes(sub))
		}()
	}
	if run == "admin" {
		return p.SubscribeAdminEventsResult{SubscriptionID: sub}, nil
	}
	return p.SubscribeRunResult{SubscriptionID: sub, RunID: run, Status: store.RunRunning, Active: !f.inactive}, nil
}

func (e *subEdge) unsubscribe(ctx context.Context, raw json.RawMessage) (any, error) {
	var ps p.UnsubscribeParams
	if err := json.Unmarshal(raw, &ps); err != nil {
		return nil, err
	}
	e.mu.Lock()
	pushed := e.pushed[ps.SubscriptionID]
	e.mu.Unlock()
	if pushed != nil {
		select {
		case <-pushed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	push(edge.ConnFrom(ctx), []Notification{runEvent(ps.SubscriptionID, 99, false)})
	e.unsubscribed <- ps.SubscriptionID
	return p.UnsubscribeResult{SubscriptionID: ps.SubscriptionID, Unsubscribed: true}, nil
}

// push queues notes on conn, in order.
func push(conn *edge.Conn, notes []Notification) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for _, n := range notes {
		if conn.Notify(ctx, n.Method, n.Params) != nil {
			return
		}
	}
}

// runEvent is event seq of a run subscription; terminal ends the run.
func runEvent(sub string, seq int64, terminal bool) Notification {
	status := p.RunEventStatus{Status: store.RunRunning}
	if terminal {
		status = p.RunEventStatus{Status: store.RunCompleted, Terminal: true}
	}
	return note(p.NotifyRunEvent, p.RunEventNotification{SubscriptionID: sub, RunEvent: p.RunEvent{RunID: "run", Seq: seq, Kind: "status", Status: &status}})
}

// runEvents are events 1..n of a run, the last terminal.
func runEvents(sub string, n int64) []Notification {
	var out []Notification
	for seq := int64(1); seq <= n; seq++ {
		out = append(out, runEvent(sub, seq, seq == n))
	}
	return out
}

func note(method string, params any) Notification {
	raw, err := json.Marshal(params)
	if err != nil {
		panic(err)
	}
	return Notification{Method: method, Params: raw}
}

// inbox collects what a subscription is delivered; it never blocks the
// reader (its buffer holds more than any test sends).
type inbox chan Notification

func newInbox() inbox { return make(inbox, 512) }

func (in inbox) deliver(method string, params json.RawMessage) {
	in <- Notification{Method: method, Params: params}
}

// next is the next notification delivered.
func (in inbox) next(t *testing.T) Notification {
	t.Helper()
	select {
	case n := <-in:
		return n
	case <-time.After(wait):
		t.Logf("no notification within %s", wait)
		is.New(t).Fail() // the notification is delivered
		return Notification{}
	}
}

// seqOf is a run event's sequence number.
func seqOf(t *testing.T, n Notification) int64 {
	t.Helper()
	var ev p.RunEventNotification
	is.New(t).NoErr(json.Unmarshal(n.Params, &ev)) // a run event
	return ev.Seq
}

// barrier returns once the client's reader has read every notification
// e's feeds push, and every frame e queued before the reply to a call
// made then. The feeds push from goroutines of their own, so their
// frames are queued before the call only once every push is done.
func (e *subEdge) barrier(t *testing.T, c *Client) {
	t.Helper()
	is := is.New(t)
	e.mu.Lock()
	pushes := slices.Collect(maps.Values(e.pushed))
	e.mu.Unlock()
	for _, pushed := range pushes {
		select {
		case <-pushed:
		case <-time.After(wait):
			is.Fail() // the feeds' notifications are queued
		}
	}
	is.NoErr(c.Call(bounded(t), "test.echo", map[string]any{}, nil)) // the barrier call
}

func (c *Client) routeCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.routes)
}

// TestSubscribeRoutesEachSubscriptionInOrder: two subscriptions whose
// events follow their replies at once each get all of theirs, in order,
// and nothing else; the notifications of a subscription Subscribe did not
// open go to OnNotification; a subscription's route ends with its
// terminal event, before the next frame is read.
func TestSubscribeRoutesEachSubscriptionInOrder(t *testing.T) {
	is := is.New(t)
	const events = 200
	stray := func(sub string) []Notification {
		// After the run's end: no route takes it any more.
		return append(runEvents(sub, events), runEvent(sub, events+1, false), runEvent("sub_other", 1, false))
	}
	c, e := startSubs(t, map[string]*feed{"run_a": {notes: stray}, "run_b": {notes: stray}})
	others := make(chan Notification, 16)
	c.OnNotification(func(n Notification) { others <- n })

	inboxes := map[string]inbox{"run_a": newInbox(), "run_b": newInbox()}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for run, in := range inboxes {
		wg.Go(func() {
			var res p.SubscribeRunResult
			errs <- c.Subscribe(bounded(t), p.MethodRunsSubscribe, p.SubscribeRunParams{RunID: run}, &res, in.deliver)
		})
	}
	wg.Wait()
	is.NoErr(<-errs)
	is.NoErr(<-errs)
	for _, in := range inboxes {
		for seq := int64(1); seq <= events; seq++ {
			n := in.next(t)
			is.Equal(n.Method, p.NotifyRunEvent)
			is.Equal(seqOf(t, n), seq) // in order, none lost, none of the other's
		}
	}
	e.barrier(t, c)
	is.Equal(len(others), 4) // each run's event after its end, and sub_other's
	for range 4 {
		n := <-others
		seq := seqOf(t, n)
		is.True(seq == events+1 || seq == 1)
	}
	for _, in := range inboxes {
		is.Equal(len(in), 0) // nothing after the end
	}
	is.Equal(c.routeCount(), 0)
}

// TestSubscribeResultIsDecodedBeforeDelivery: deliver sees the result
// already decoded.
func TestSubscribeResultIsDecodedBeforeDelivery(t *testing.T) {
	is := is.New(t)
	c, _ := startSubs(t, map[string]*feed{"run": {notes: func(sub string) []Notification { return runEvents(sub, 1) }}})
	var res p.SubscribeRunResult
	seen := make(chan string, 1)
	err := c.Subscribe(bounded(t), p.MethodRunsSubscribe, p.SubscribeRunParams{RunID: "run"}, &res, func(string, json.RawMessage) {
		seen <- res.SubscriptionID
	})
	is.NoErr(err)
	select {
	case id := <-seen:
		is.Equal(id, "sub_1")
	case <-time.After(wait):
		is.Fail() // the event is delivered
	}
	is.Equal(res.RunID, "run")
}

// TestSubscribeLagEndsTheSubscription: a lag notification is delivered
// and ends the route, without an unsubscribe.
func TestSubscribeLagEndsTheSubscription(t *testing.T) {
	is := is.New(t)
	lagged := func(sub string) []Notification {
		return []Notification{
			note(p.NotifyAdminEvent, p.AdminEventNotification{SubscriptionID: sub, Sequence: 1, AdminEvent: p.AdminEvent{Kind: "deployment_saved"}}),
			note(p.NotifyAdminLagged, p.LaggedNotification{SubscriptionID: sub, Cursor: 1, Reason: p.LagBufferFull}),
		}
	}
	c, e := startSubs(t, map[string]*feed{"admin": {notes: lagged}})
	in := newInbox()
	var res p.SubscribeAdminEventsResult
	is.NoErr(c.Subscribe(bounded(t), p.MethodAdminEventsSubscribe, p.SubscribeAdminEventsParams{}, &res, in.deliver))
	is.Equal(in.next(t).Method, p.NotifyAdminEvent)
	is.Equal(in.next(t).Method, p.NotifyAdminLagged)
	e.barrier(t, c)
	is.Equal(c.routeCount(), 0)
	is.Equal(len(e.unsubscribed), 0) // the server ended it: nothing to unsubscribe
}

// TestSubscribeContextEndUnsubscribes: once the subscription's context
// ends the client unsubscribes, and what the server still sends for it
// reaches neither deliver nor OnNotification.
func TestSubscribeContextEndUnsubscribes(t *testing.T) {
	is := is.New(t)
	c, e := startSubs(t, map[string]*feed{"run": {notes: func(sub string) []Notification { return []Notification{runEvent(sub, 1, false)} }}})
	others := make(chan Notification, 16)
	c.OnNotification(func(n Notification) { others <- n })
	in := newInbox()
	ctx, cancel := context.WithCancel(bounded(t))
	is.NoErr(c.Subscribe(ctx, p.MethodRunsSubscribe, p.SubscribeRunParams{RunID: "run"}, nil, in.deliver))
	is.Equal(seqOf(t, in.next(t)), int64(1))
	cancel()
	select {
	case sub := <-e.unsubscribed:
		is.Equal(sub, "sub_1")
	case <-time.After(wait):
		is.Fail() // the client unsubscribes
	}
	e.barrier(t, c) // the event pushed before the unsubscribe's reply has been read
	is.Equal(len(in), 0)
	is.Equal(len(others), 0)
}

// TestSubscribeAbandonedBeforeTheReply: a subscription whose context ends
// before its reply comes is unsubscribed once it does, and Subscribe's
// result is left alone.
func TestSubscribeAbandonedBeforeTheReply(t *testing.T) {
	is := is.New(t)
	hold := make(chan struct{})
	c, e := startSubs(t, map[string]*feed{"run": {hold: hold, notes: func(sub string) []Notification { return []Notification{runEvent(sub, 1, false)} }}})
	others := make(chan Notification, 16)
	c.OnNotification(func(n Notification) { others <- n })
	ctx, cancel := context.WithCancel(bounded(t))
	res := p.SubscribeRunResult{SubscriptionID: "untouched"}
	in := newInbox()
	errc := make(chan error, 1)
	go func() {
		errc <- c.Subscribe(ctx, p.MethodRunsSubscribe, p.SubscribeRunParams{RunID: "run"}, &res, in.deliver)
	}()
	cancel()
	select {
	case err := <-errc:
		is.True(errors.Is(err, context.Canceled))
	case <-time.After(wait):
		is.Fail() // Subscribe returns once its context ends
	}
	close(hold)
	select {
	case sub := <-e.unsubscribed:
		is.Equal(sub, "sub_1")
	case <-time.After(wait):
		is.Fail() // the late subscription is unsubscribed
	}
	e.barrier(t, c)
	is.Equal(res.SubscriptionID, "untouched")
	is.Equal(len(in), 0)
	is.Equal(len(others), 0)
}

// TestSubscribeInactiveOpensNoRoute: a reply that says no event follows
// opens no route.
func TestSubscribeInactiveOpensNoRoute(t *testing.T) {
	is := is.New(t)
	c, _ := startSubs(t, map[string]*feed{"run": {inactive: true}})
	var res p.SubscribeRunResult
	is.NoErr(c.Subscribe(bounded(t), p.MethodRunsSubscribe, p.SubscribeRunParams{RunID: "run"}, &res, newInbox().deliver))
	is.True(!res.Active)
	is.Equal(c.routeCount(), 0)
}

// TestSubscribeRefused: a refused subscription is the server's error and
// opens no route; a method that opens no subscription is refused by the
// client.
func TestSubscribeRefused(t *testing.T) {
	is := is.New(t)
	c, _ := startSubs(t, map[string]*feed{})
	err := c.Subscribe(bounded(t), p.MethodRunsSubscribe, p.SubscribeRunParams{RunID: "nope"}, nil, newInbox().deliver)
	var rpcErr *jsonrpc.Error
	is.True(errors.As(err, &rpcErr))
	is.Equal(c.routeCount(), 0)
	err = c.Subscribe(bounded(t), p.MethodRunsInspect, p.RunIDParams{RunID: "run"}, nil, newInbox().deliver)
	is.True(err != nil)
	is.True(!errors.As(err, &rpcErr)) // refused before sending
}

// TestSubscribeRoutesEndWithTheConnection: a lost connection ends every
// route.
func TestSubscribeRoutesEndWithTheConnection(t *testing.T) {
	is := is.New(t)
	c, _ := startSubs(t, map[string]*feed{"run": {notes: func(sub string) []Notification { return []Notification{runEvent(sub, 1, false)} }}})
	in := newInbox()
	is.NoErr(c.Subscribe(bounded(t), p.MethodRunsSubscribe, p.SubscribeRunParams{RunID: "run"}, nil, in.deliver))
	is.Equal(seqOf(t, in.next(t)), int64(1))
	is.Equal(c.routeCount(), 1)
	is.NoErr(c.Close())
	is.Equal(c.routeCount(), 0)
}
