package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// Defaults of HubOptions.
const (
	DefaultSubscriptionBuffer = 256
	DefaultMaxSubscriptions   = 32
)

// HubOptions bound live event subscriptions.
type HubOptions struct {
	// Buffer is how many events a subscription may hold that its
	// connection has not taken yet (DefaultSubscriptionBuffer when 0).
	// Beyond it the subscription lags: it is sent a lag notification with
	// its cursor and ends. Replays from the store read pages of Buffer.
	Buffer int
	// MaxSubscriptions is how many subscriptions one connection may have
	// open at once (DefaultMaxSubscriptions when 0); the edge's limit.
	MaxSubscriptions int
	// Metrics counts lag notifications and times the commits of the
	// hub's store; nil records nothing.
	Metrics *metrics.Metrics
}

// Hub publishes live events to subscriptions: the events of runs and the
// admin event log, each read from the store after its commit, so that a
// subscription replays from the store and goes on live with no gap or
// duplicate. Writes must go through Store() for the hub to see them; in a
// cluster, the commits of other nodes reach it through WakeRun, WakeAdmin
// and WakeAll, which the store's announcements call.
//
// Each log followed by at least one subscription has a feed: a goroutine
// that, woken after each commit to that log, reads the new events once
// and offers them to every subscription's bounded buffer without
// blocking. Each subscription has a goroutine that waits for the reply
// that gives its id, replays what the client lacks from the store (page
// by page), then delivers its buffer through the connection's Notifier. A
// buffer that overflows is not grown and nothing is dropped silently:
// the subscription is sent one lag notification with the last sequence
// number it delivered, and ends; the client subscribes again after it.
// A run subscription also ends after the event that ends the run.
//
// The goroutines end with their subscription: on unsubscribe, at the end
// of the connection (its Notifier's Done), after a lag or the run's end,
// or at Close; a feed ends with its last subscription.
type Hub struct {
	store  store.Store
	opts   HubOptions
	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc

	mu     sync.Mutex
	feeds  map[string]*feed         // by topic key
	subs   map[string]*subscription // by id
	conns  map[<-chan struct{}]int  // open subscriptions per connection
	closed bool
	wg     sync.WaitGroup // every feed and subscription goroutine
}

// NewHub returns a hub over st.
func NewHub(st store.Store, opts HubOptions) *Hub {
	if opts.Buffer <= 0 {
		opts.Buffer = DefaultSubscriptionBuffer
	}
	if opts.MaxSubscriptions <= 0 {
		opts.MaxSubscriptions = DefaultMaxSubscriptions
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Hub{
		store: st, opts: opts, ctx: ctx, cancel: cancel,
		feeds: map[string]*feed{}, subs: map[string]*subscription{}, conns: map[<-chan struct{}]int{},
	}
}

// Close ends every subscription, without a notification, and waits until
// their goroutines have returned or ctx is done. No subscription opens
// after it.
func (h *Hub) Close(ctx context.Context) error {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.cancel()
	stopped := make(chan struct{})
	go func() {
		// Returns promptly: every goroutine of the hub watches h.ctx.
		h.wg.Wait()
		close(stopped)
	}()
	select {
	case <-stopped:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("close live event hub: %w", ctx.Err())
	}
}

// feed reads a topic's new events after each commit and offers them to
// its subscriptions.
type feed struct {
	topic topic
	// last is the sequence number of the last event offered (under
	// Hub.mu).
	last int64
	subs map[*subscription]struct{} // under Hub.mu
	wake chan struct{}              // capacity 1: a commit happened
	stop chan struct{}              // closed when the last subscription leaves
}

// subscription is one client's subscription to a topic.
type subscription struct {
	id     string
	topic  topic
	feed   *feed
	n      *rpc.Request
	ctx    context.Context // cancelled on unsubscribe and Close
	cancel context.CancelFunc
	// buf holds the events offered and not delivered yet.
	buf chan liveEvent
	// liveFrom is the first sequence number that comes through buf; the
	// ones before it are replayed from the store.
	liveFrom int64
	// cursor is the last sequence number delivered (the goroutine's own).
	cursor int64
	// lag is closed, with lagReason set, once the subscription lags
	// (under Hub.mu); detached once it has left the hub's maps.
	lag       chan struct{}
	lagReason string
	detached  bool
}

// committed wakes the feed of a topic after a commit to it, if any
// subscription follows it. It never blocks.
func (h *Hub) committed(key string) { h.wakeAfter(key, 0) }

// WakeRun wakes the feed of run id's events, as a commit of them through
// Store() does, unless the feed has read up to event seq already (seq 0
// wakes it anyway). It is for commits the hub cannot see: another node's,
// which the store announces (postgres.Listener). The feed reads from where
// it is, so a wake that finds nothing new costs one read and delivers
// nothing twice. It never blocks.
func (h *Hub) WakeRun(id string, seq int64) { h.wakeAfter(runTopicKey(id), seq) }

// WakeAdmin is WakeRun for the admin event log.
func (h *Hub) WakeAdmin(seq int64) { h.wakeAfter(adminTopicKey, seq) }

// WakeAll wakes every feed, each to read its log from where it is: after
// commits may have gone unannounced (the store's listener reconnected).
// It never blocks.
func (h *Hub) WakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, f := range h.feeds {
		f.poke()
	}
}

// wakeAfter wakes the feed of key, if any subscription follows it and it
// has not read event seq yet.
func (h *Hub) wakeAfter(key string, seq int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if f := h.feeds[key]; f != nil && (seq <= 0 || seq > f.last) {
		f.poke()
	}
}

// poke wakes f without blocking.
func (f *feed) poke() {
	select {
	case f.wake <- struct{}{}:
	default: // already woken: its next read takes this commit too
	}
}

// open registers a subscription of rn's connection to t for the events
// after after; head is t's last sequence number, read before. The
// subscription delivers once rn's reply is released.
func (h *Hub) open(rn *rpc.Request, t topic, after, head int64) (string, error) {
	id, err := newSubscriptionID()
	if err != nil {
		return "", err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return "", errShuttingDown()
	}
	conn := rn.Done()
	if h.conns[conn] >= h.opts.MaxSubscriptions {
		return "", jsonrpc.Errorf(jsonrpc.Overloaded,
			"this connection has %d subscriptions open, the most it may have: unsubscribe from one first", h.opts.MaxSubscriptions)
	}
	f := h.feeds[t.key]
	if f == nil {
		// Woken at once: it reads what was committed since head was read.
		f = &feed{topic: t, last: head, subs: map[*subscription]struct{}{}, wake: make(chan struct{}, 1), stop: make(chan struct{})}
		f.wake <- struct{}{}
		h.feeds[t.key] = f
		h.wg.Add(1)
		go h.runFeed(f)
	}
	ctx, cancel := context.WithCancel(h.ctx)
	s := &subscription{
		id: id, topic: t, feed: f, n: rn, ctx: ctx, cancel: cancel,
		buf: make(chan liveEvent, h.opts.Buffer), liveFrom: f.last + 1, cursor: after, lag: make(chan struct{}),
	}
	f.subs[s] = struct{}{}
	h.subs[id] = s
	h.conns[conn]++
	h.wg.Add(1)
	go h.serve(s)
	return id, nil
}

// unsubscribe ends subscription id of rn's connection if its topic is
// of the kind asked; false if the connection has no such subscription.
func (h *Hub) unsubscribe(rn *rpc.Request, id string, kind func(topic) bool) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.subs[id]
	if !ok || s.n.Done() != rn.Done() || !kind(s.topic) {
		return false
	}
	h.detach(s)
	return true
}

// detach removes s from the hub and cancels it; the last subscription of
// a feed stops it. Idempotent; under h.mu.
func (h *Hub) detach(s *subscription) {
	s.cancel()
	if s.detached {
		return
	}
	s.detached = true
	delete(h.subs, s.id)
	conn := s.n.Done()
	if h.conns[conn]--; h.conns[conn] <= 0 {
		delete(h.conns, conn)
	}
	delete(s.feed.subs, s)
	if len(s.feed.subs) == 0 {
		close(s.feed.stop)
		delete(h.feeds, s.feed.topic.key)
	}
}

func newSubscriptionID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("subscription id: %w", err)
	}
	return "sub_" + hex.EncodeToString(b[:]), nil
}
