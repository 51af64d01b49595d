package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	p "github.com/mcpflow/mcpflow/api/protocol"
)

// unsubscribeMethods maps each subscribe method to the method that ends
// its subscriptions.
var unsubscribeMethods = map[string]string{
	p.MethodRunsSubscribe:        p.MethodRunsUnsubscribe,
	p.MethodAdminEventsSubscribe: p.MethodAdminEventsUnsubscribe,
}

// unsubscribeTimeout bounds the unsubscribe sent for a subscription whose
// context ended before the server ended it.
const unsubscribeTimeout = 2 * time.Second

// errNoSubscription is a subscribe reply that names no subscription.
var errNoSubscription = errors.New("the reply has no subscription_id")

// route is one subscription opened by Subscribe: the reader hands its
// notifications to deliver.
type route struct {
	c           *Client
	method      string
	unsubscribe string
	deliver     func(method string, params json.RawMessage)
	// ctx is the subscription's: the caller's, cancelled once the route
	// is no more.
	ctx    context.Context
	cancel context.CancelFunc

	// mu orders the reader's decoding of the reply into result with the
	// caller giving up on it: once abandoned, result is not touched.
	mu        sync.Mutex
	result    any
	abandoned bool

	// Set by the reader when it opens the route, before anyone else
	// reads them.
	id     string
	stopAt func() bool // stops the context.AfterFunc that abandons the route

	// closing is set (under c.mu) once ctx has ended while the server
	// still holds the subscription: its notifications are dropped until
	// the unsubscribe is answered.
	closing bool
}

// Subscribe calls method, a subscribe method (workflow.runs.subscribe or
// workflow.admin.events.subscribe), decodes its result into result (which
// may be nil), and hands each notification of the subscription it opened
// to deliver, in the order the server sent them, until the subscription
// ends or ctx does. It returns once the reply has been read.
//
// The subscription ends after a workflow.runs.event whose status is
// terminal (the run's last event), after a workflow.runs.lagged or
// workflow.admin.lagged notification (delivered, then the end), when the
// reply says it is not active (a run that had ended: deliver is never
// called), or when the connection ends. When ctx ends first, deliver is
// no longer called and the client sends the matching unsubscribe, best
// effort, within 2 s.
//
// deliver runs on the connection's reader, one call at a time, only
// after result has been decoded (possibly before Subscribe returns), and
// never once ctx has ended. While it runs no other reply or notification
// is read: it must hand the notification on and return. A subscriber
// that holds the reader makes the server end its subscriptions (and
// every other of the connection) with a lag notification.
//
// Notifications are routed by their subscription_id; those of
// subscriptions not opened with Subscribe go to the OnNotification
// handler. The routes a client holds are bounded by the server's
// subscriptions per connection.
func (c *Client) Subscribe(ctx context.Context, method string, params, result any, deliver func(method string, params json.RawMessage)) error {
	unsubscribe, ok := unsubscribeMethods[method]
	if !ok {
		return fmt.Errorf("%s: not a subscribe method", method)
	}
	if deliver == nil {
		return fmt.Errorf("%s: no deliver function", method)
	}
	rctx, cancel := context.WithCancel(ctx)
	rt := &route{c: c, method: method, unsubscribe: unsubscribe, deliver: deliver, ctx: rctx, cancel: cancel, result: result}
	_, ch, err := c.send(ctx, method, params, rt)
	if err != nil {
		cancel()
		return err
	}
	select {
	case r, ok := <-ch:
		switch {
		case !ok:
			cancel()
			return fmt.Errorf("%s: %w", method, c.closedErr())
		case r.Error != nil:
			return r.Error
		}
		return r.decodeErr
	case <-ctx.Done():
		// The reply may still come: the reader then opens the route on a
		// context that has ended, which unsubscribes at once.
		rt.mu.Lock()
		rt.abandoned = true
		rt.mu.Unlock()
		cancel()
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// open runs on the reader with the reply to rt's request, before the
// next frame is read: it decodes the result into the caller's and
// registers the route. Its error is the caller's.
func (c *Client) open(rt *route, r response) error {
	if r.Error != nil {
		rt.cancel()
		return nil
	}
	var sub struct {
		SubscriptionID string `json:"subscription_id"`
		Active         *bool  `json:"active"`
	}
	if err := json.Unmarshal(r.Result, &sub); err != nil || sub.SubscriptionID == "" {
		rt.cancel()
		return fmt.Errorf("%s: decode result: %w", rt.method, errors.Join(errNoSubscription, err))
	}
	var err error
	rt.mu.Lock()
	if !rt.abandoned && rt.result != nil {
		if e := json.Unmarshal(r.Result, rt.result); e != nil {
			err = fmt.Errorf("%s: decode result: %w", rt.method, e)
		}
	}
	rt.mu.Unlock()
	if sub.Active != nil && !*sub.Active {
		rt.cancel() // over already: no notification follows
		return err
	}
	if err != nil {
		rt.cancel() // the caller has no subscription: end the server's
	}
	rt.id = sub.SubscriptionID
	c.mu.Lock()
	c.routes[rt.id] = rt
	c.mu.Unlock()
	rt.stopAt = context.AfterFunc(rt.ctx, rt.abandon)
	return err
}

// route hands a notification to the route of its subscription, on the
// reader, and reports whether one took it.
func (c *Client) route(method string, params json.RawMessage) bool {
	var n struct {
		SubscriptionID string `json:"subscription_id"`
		Status         *struct {
			Terminal bool `json:"terminal"`
		} `json:"status"`
	}
	if json.Unmarshal(params, &n) != nil || n.SubscriptionID == "" {
		return false
	}
	ends := method == p.NotifyRunLagged || method == p.NotifyAdminLagged ||
		method == p.NotifyRunEvent && n.Status != nil && n.Status.Terminal
	c.mu.Lock()
	rt, ok := c.routes[n.SubscriptionID]
	if ok && ends {
		delete(c.routes, n.SubscriptionID)
	}
	closing := ok && rt.closing
	c.mu.Unlock()
	if !ok {
		return false
	}
	if !closing && rt.ctx.Err() == nil {
		rt.deliver(method, params)
	}
	if ends {
		rt.stop()
	}
	return true
}

// stop ends a route the server ended (or the connection did): its context
// is released without unsubscribing. Called on the reader, after the
// route left c.routes.
func (rt *route) stop() {
	rt.stopAt()
	rt.cancel()
}

// abandon runs once the route's context has ended: unless the server
// ended the subscription first, it drops its notifications and
// unsubscribes, then forgets the route.
func (rt *route) abandon() {
	c := rt.c
	c.mu.Lock()
	if c.routes[rt.id] != rt {
		c.mu.Unlock()
		return
	}
	rt.closing = true
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), unsubscribeTimeout)
	defer cancel()
	if err := c.Call(ctx, rt.unsubscribe, p.UnsubscribeParams{SubscriptionID: rt.id}, nil); err != nil {
		slog.Debug("unsubscribe not answered", "subscription", rt.id, "err", err)
	}
	c.mu.Lock()
	if c.routes[rt.id] == rt {
		delete(c.routes, rt.id)
	}
	c.mu.Unlock()
}
