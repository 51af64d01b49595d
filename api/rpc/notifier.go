package rpc

import (
	"context"
	"sync"
)

// Notifier pushes JSON-RPC notifications to one client connection. The
// edge implements it for each WebSocket connection, on the connection's
// bounded outbound queue, and hands it to the handlers of the
// connection's requests with WithNotifier; a subscription pushes its
// events through it. The contract:
//
//   - Notify queues the notification method(params), params encoded as
//     JSON, behind everything queued before it. It may block while the
//     outbound queue is full, but it returns, with an error, once ctx is
//     done or Done is closed. An error means the notification is not sent
//     and will not be: the subscription ends. Notify is safe for
//     concurrent use.
//   - Done is closed once the connection has ended, for any reason (a
//     read error, a write deadline, a ping timeout, a close, shutdown).
//     Every subscription of the connection then ends, and its goroutine
//     returns. Done also identifies the connection: one channel per
//     connection, the same for all its requests.
type Notifier interface {
	Notify(ctx context.Context, method string, params any) error
	Done() <-chan struct{}
}

// notifierKey is the context key of a request's notifier.
type notifierKey struct{}

// Request is the notifier of one request, and whether its reply is
// queued yet.
type Request struct {
	Notifier
	replied chan struct{}
	once    sync.Once
}

// release marks the request's reply as queued.
func (r *Request) release() { r.once.Do(func() { close(r.replied) }) }

// Replied is closed once the request's reply is queued on the connection
// (or once it is known that none will be): what a subscription waits for
// before it delivers anything.
func (r *Request) Replied() <-chan struct{} { return r.replied }

// WithNotifier returns a context for one request of the connection that n
// pushes to, so that its handler may open subscriptions, and the function
// release, which the edge calls once the request's reply is queued on the
// connection (or once it knows none will be: the request was cancelled,
// or was a notification). A subscription sends nothing before the reply
// that gives its id: it starts delivering only after release. Calling
// release again does nothing. In a batch, release each entry's after the
// batch reply is queued.
//
// Without a notifier in its context (a POST to /rpc), a subscribe
// request fails: there is nowhere to push to.
func WithNotifier(ctx context.Context, n Notifier) (_ context.Context, release func()) {
	rn := &Request{Notifier: n, replied: make(chan struct{})}
	return context.WithValue(ctx, notifierKey{}, rn), rn.release
}

// NotifierFrom returns the notifier of the request whose context is ctx.
func NotifierFrom(ctx context.Context) (*Request, bool) {
	rn, ok := ctx.Value(notifierKey{}).(*Request)
	return rn, ok && rn.Notifier != nil
}
