package live

import (
	"context"
	"log/slog"

	"github.com/mcpflow/mcpflow/api/protocol"
)

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

// newFeed returns the feed of t, which has read up to head, woken at
// once: it reads what was committed since head was read.
func newFeed(t topic, head int64) *feed {
	f := &feed{topic: t, last: head, subs: map[*subscription]struct{}{}, wake: make(chan struct{}, 1), stop: make(chan struct{})}
	f.wake <- struct{}{}
	return f
}

// poke wakes f without blocking.
func (f *feed) poke() {
	select {
	case f.wake <- struct{}{}:
	default: // already woken: its next read takes this commit too
	}
}

// runFeed reads its topic's new events each time it is woken, until its
// last subscription leaves or the hub closes.
func (h *Hub) runFeed(f *feed) {
	defer h.wg.Done()
	for {
		select {
		case <-f.stop:
			return
		case <-h.ctx.Done():
			return
		case <-f.wake:
			h.pump(f)
		}
	}
}

// pump offers every event committed after the feed's last to its
// subscriptions, page by page. When the store cannot be read, its
// subscriptions lag rather than miss events.
func (h *Hub) pump(f *feed) {
	for {
		h.mu.Lock()
		after := f.last
		h.mu.Unlock()
		ctx, cancel := context.WithTimeout(h.ctx, readTimeout)
		events, err := f.topic.read(ctx, after, h.opts.Buffer)
		cancel()
		h.mu.Lock()
		if err != nil {
			slog.Warn("live events not read", "topic", f.topic.key, "err", err)
			for s := range f.subs {
				s.fail(protocol.LagUnavailable)
			}
			h.mu.Unlock()
			return
		}
		for _, e := range events {
			if e.seq <= f.last {
				continue
			}
			f.last = e.seq
			for s := range f.subs {
				s.offer(e)
			}
		}
		h.mu.Unlock()
		if len(events) < h.opts.Buffer {
			return
		}
	}
}
