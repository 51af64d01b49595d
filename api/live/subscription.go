package live

import (
	"context"
	"log/slog"

	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// subscription is one client's subscription to a topic.
type subscription struct {
	id     string
	topic  topic
	feed   *feed
	n      *rpc.Request
	ctx    context.Context // cancelled on unsubscribe and Close
	cancel context.CancelFunc
	// buf holds the events offered and not delivered yet.
	buf chan event
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

// offer puts e in the buffer, or makes s lag if it is full. Under Hub.mu.
func (s *subscription) offer(e event) {
	if s.lagReason != "" {
		return
	}
	select {
	case s.buf <- e:
	default:
		s.fail(protocol.LagBufferFull)
	}
}

// fail makes s lag, once, for reason. Under Hub.mu.
func (s *subscription) fail(reason string) {
	if s.lagReason == "" {
		s.lagReason = reason
		close(s.lag)
	}
}

// serve delivers a subscription's events until it ends.
func (h *Hub) serve(s *subscription) {
	defer h.wg.Done()
	defer func() {
		h.mu.Lock()
		h.detach(s)
		h.mu.Unlock()
	}()
	select {
	case <-s.n.Replied(): // the reply with the subscription id is queued
	case <-s.ctx.Done():
		return
	case <-s.n.Done():
		return
	}
	if !h.replay(s) {
		return
	}
	for {
		select {
		case <-s.lag: // before anything still buffered: lag promptly
			h.lagged(s, s.lagReason)
			return
		default:
		}
		select {
		case <-s.lag:
		case e := <-s.buf:
			if e.seq <= s.cursor {
				continue // replayed already
			}
			if e.seq != s.cursor+1 {
				h.lagged(s, protocol.LagUnavailable) // never a silent gap
				return
			}
			if !h.deliver(s, e) {
				return
			}
		case <-s.ctx.Done():
			return
		case <-s.n.Done():
			return
		}
	}
}

// replay delivers from the store the events after the cursor that come
// before the buffered ones, page by page; false once s has ended.
func (h *Hub) replay(s *subscription) bool {
	for s.cursor < s.liveFrom-1 {
		ctx, cancel := context.WithTimeout(s.ctx, readTimeout)
		events, err := s.topic.read(ctx, s.cursor, h.opts.Buffer)
		cancel()
		if err != nil {
			if s.ctx.Err() == nil {
				slog.Warn("live events not replayed", "subscription", s.id, "topic", s.topic.key, "err", err)
				h.lagged(s, protocol.LagUnavailable)
			}
			return false
		}
		if len(events) == 0 {
			return true // retention dropped them (admin events): go on live
		}
		for _, e := range events {
			if e.seq >= s.liveFrom {
				return true
			}
			if !h.deliver(s, e) {
				return false
			}
		}
	}
	return true
}

// deliver sends e; false once s has ended: it could not be sent, or it
// ended the run.
func (h *Hub) deliver(s *subscription, e event) bool {
	if err := s.n.Notify(s.ctx, s.topic.event, s.topic.params(s.id, e)); err != nil {
		slog.Debug("live event not sent", "subscription", s.id, "seq", e.seq, "err", err)
		h.lagged(s, protocol.LagUnavailable)
		return false
	}
	s.cursor = e.seq
	return !e.terminal
}

// lagged tells the client that s ends, and where to resume from. Nothing
// is sent once s was cancelled or its connection ended.
func (h *Hub) lagged(s *subscription, reason string) {
	if s.ctx.Err() != nil || connectionEnded(s.n) {
		return
	}
	p := protocol.LaggedNotification{SubscriptionID: s.id, Cursor: s.cursor, Reason: reason}
	if s.topic.runID != "" {
		p.RunID = &s.topic.runID
	}
	slog.Info("subscription lagged", "subscription", s.id, "topic", s.topic.key, "cursor", s.cursor, "reason", reason)
	h.opts.Metrics.SubscriptionLagged(s.topic.kind())
	if err := s.n.Notify(s.ctx, s.topic.lagged, p); err != nil {
		slog.Debug("lag notification not sent", "subscription", s.id, "err", err)
	}
}

// connectionEnded reports whether n's connection has ended, without
// waiting.
func connectionEnded(n rpc.Notifier) bool {
	select {
	case <-n.Done():
		return true
	default:
		return false
	}
}
