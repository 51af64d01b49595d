// Package live owns the subscriptions to live events: the hub, its feeds
// (one per event log followed), each subscription's replay from the store
// and delivery through its connection's rpc.Notifier, and the JSON-RPC
// notifications they push (workflow.runs.event, workflow.admin.event and
// their lag notifications). It reads the event logs from the store and
// never writes them; it learns of commits as a store.Observer, told by
// the store.Observed that writers commit through and, in a cluster, by
// the store's announcements. The subscribe methods are api/service's:
// they check what is asked and open subscriptions here.
package live

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// Defaults of Options.
const (
	DefaultSubscriptionBuffer = 256
	DefaultMaxSubscriptions   = 32
)

// readTimeout bounds each read of an event log from the store.
const readTimeout = 10 * time.Second

// ErrClosed is what opening a subscription returns once the hub is
// closing.
var ErrClosed = errors.New("the live event hub is closed")

// Options bound live event subscriptions.
type Options struct {
	// Buffer is how many events a subscription may hold that its
	// connection has not taken yet (DefaultSubscriptionBuffer when 0).
	// Beyond it the subscription lags: it is sent a lag notification with
	// its cursor and ends. Replays from the store read pages of Buffer.
	Buffer int
	// MaxSubscriptions is how many subscriptions one connection may have
	// open at once (DefaultMaxSubscriptions when 0); the edge's limit.
	MaxSubscriptions int
	// Metrics counts lag notifications; nil records nothing.
	Metrics *metrics.Metrics
}

// Logs is what the hub reads: a run's event log and the admin event log.
type Logs interface {
	store.RunEventLog
	ListEvents(ctx context.Context, afterSeq int64, limit int) ([]store.Event, error)
}

// Hub publishes live events to subscriptions: the events of runs and the
// admin event log, each read from the store after its commit, so that a
// subscription replays from the store and goes on live with no gap or
// duplicate. It is the store.Observer of the store the writers commit
// through (store.Observed): WakeRun, WakeAdmin and WakeAll tell it of
// commits, this node's and, through the store's announcements
// (postgres.Listener), the other nodes' of a cluster.
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
	logs   Logs
	opts   Options
	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc

	mu     sync.Mutex
	feeds  map[string]*feed         // by topic key
	subs   map[string]*subscription // by id
	conns  map[<-chan struct{}]int  // open subscriptions per connection
	closed bool
	wg     sync.WaitGroup // every feed and subscription goroutine
}

// The hub is what store.Observed and a cluster's listener tell of commits.
var _ store.Observer = (*Hub)(nil)

// NewHub returns a hub that reads the events it publishes from logs.
func NewHub(logs Logs, opts Options) *Hub {
	if opts.Buffer <= 0 {
		opts.Buffer = DefaultSubscriptionBuffer
	}
	if opts.MaxSubscriptions <= 0 {
		opts.MaxSubscriptions = DefaultMaxSubscriptions
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Hub{
		logs: logs, opts: opts, ctx: ctx, cancel: cancel,
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

// WakeRun implements store.Observer: it wakes the feed of run id's
// events, if a subscription follows them, unless the feed has read up to
// event seq already (seq 0 wakes it anyway). The feed reads from where it
// is, so a wake that finds nothing new costs one read and delivers
// nothing twice. It never blocks.
func (h *Hub) WakeRun(id string, seq int64) { h.wakeAfter(runTopicKey(id), seq) }

// WakeAdmin implements store.Observer: WakeRun for the admin event log.
func (h *Hub) WakeAdmin(seq int64) { h.wakeAfter(adminTopicKey, seq) }

// WakeAll implements store.Observer: it wakes every feed, each to read
// its log from where it is, after commits may have gone unannounced (the
// store's listener reconnected). It never blocks.
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

// SubscribeRun opens a subscription of rn's connection to run id's
// events after sequence number after, and returns its id; head is the
// run's last sequence number, read before. The subscription delivers
// once rn's reply is released, and ends after the event that ends the
// run.
func (h *Hub) SubscribeRun(rn *rpc.Request, id string, after, head int64) (string, error) {
	return h.open(rn, h.runTopic(id), after, head)
}

// SubscribeAdmin opens a subscription of rn's connection to the admin
// events after sequence number after, and returns its id; head is the
// log's last sequence number, read before.
func (h *Hub) SubscribeAdmin(rn *rpc.Request, after, head int64) (string, error) {
	return h.open(rn, h.adminTopic(), after, head)
}

// UnsubscribeRun ends run subscription id of rn's connection; false if
// the connection has no such run subscription.
func (h *Hub) UnsubscribeRun(rn *rpc.Request, id string) bool {
	return h.unsubscribe(rn, id, func(t topic) bool { return t.runID != "" })
}

// UnsubscribeAdmin ends admin event subscription id of rn's connection;
// false if the connection has no such admin event subscription.
func (h *Hub) UnsubscribeAdmin(rn *rpc.Request, id string) bool {
	return h.unsubscribe(rn, id, func(t topic) bool { return t.runID == "" })
}

// OpenSubscriptions is how many subscriptions the hub holds: what tests
// and diagnostics see of its state.
func (h *Hub) OpenSubscriptions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Buffered reports how many events subscription id holds undelivered and
// whether it lags; ok is false once it has ended. Like OpenSubscriptions,
// it is for tests and diagnostics.
func (h *Hub) Buffered(id string) (n int, lagging, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.subs[id]
	if !ok {
		return 0, false, false
	}
	return len(s.buf), s.lagReason != "", true
}

// open registers a subscription of rn's connection to t for the events
// after after; head is t's last sequence number, read before. The
// subscription delivers once rn's reply is released.
func (h *Hub) open(rn *rpc.Request, t topic, after, head int64) (string, error) {
	id, err := NewSubscriptionID()
	if err != nil {
		return "", err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return "", ErrClosed
	}
	conn := rn.Done()
	if h.conns[conn] >= h.opts.MaxSubscriptions {
		return "", jsonrpc.Errorf(jsonrpc.Overloaded,
			"this connection has %d subscriptions open, the most it may have: unsubscribe from one first", h.opts.MaxSubscriptions)
	}
	f := h.feeds[t.key]
	if f == nil {
		f = newFeed(t, head)
		h.feeds[t.key] = f
		h.wg.Add(1)
		go h.runFeed(f)
	}
	ctx, cancel := context.WithCancel(h.ctx)
	s := &subscription{
		id: id, topic: t, feed: f, n: rn, ctx: ctx, cancel: cancel,
		buf: make(chan event, h.opts.Buffer), liveFrom: f.last + 1, cursor: after, lag: make(chan struct{}),
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

// NewSubscriptionID returns a new, random subscription id: the one a
// subscription opens with, or the one a subscribe answers with when there
// is nothing to subscribe to (the client has the run's last event).
func NewSubscriptionID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("subscription id: %w", err)
	}
	return "sub_" + hex.EncodeToString(b[:]), nil
}
