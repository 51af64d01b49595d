package audit

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
)

// Defaults of an Appender (AppenderOptions' zero values).
const (
	// DefaultWorkers append at once, so that the store commits their
	// events together (SQLite's writer batches concurrent writes).
	DefaultWorkers = 4
	// DefaultQueue events wait at most to be appended.
	DefaultQueue = 1024
	// DefaultFullWait is how long Record waits for room in a full queue
	// before it drops its event.
	DefaultFullWait = time.Second
	// DefaultHoldStart is how long the start of a span (Begin) waits for
	// its end before it is queued alone.
	DefaultHoldStart = 100 * time.Millisecond
)

// Reasons an Appender drops an event, the argument of its Dropped hook.
const (
	// DropQueueFull: the queue stayed full for FullWait, the store
	// appending slower than events came.
	DropQueueFull = "queue_full"
	// DropShutdown: Close's context ended before the event was appended.
	DropShutdown = "shutdown"
)

// AppenderOptions tune an Appender; a zero field takes its default.
type AppenderOptions struct {
	Workers   int
	Queue     int
	FullWait  time.Duration
	HoldStart time.Duration
	// Dropped counts an event dropped, by reason (a metric); nil counts
	// nothing. Each drop is also logged.
	Dropped func(reason string)
}

// Appender appends admin events off their callers' path: Record queues
// an event and returns at once, and its workers append the queued events
// to the store, a few at a time. The start and the end of a span (Begin,
// End: a direct call) are appended in that order; the start waits for the
// end up to HoldStart, so that a short call's two events are appended
// together once it is over rather than while it runs. The queue is bounded: when it is full, Record waits up to
// FullWait for room, then drops its event, counted and logged (an append
// is best effort, see Append). Its workers live until Close, which
// appends what is queued first; after Close, Record appends on the
// caller's path, as Record of the package does.
type Appender struct {
	store store.Events
	opts  AppenderOptions
	queue chan queued

	// mu orders Record's sends before Close: once closed is set, nothing
	// more is queued, so the workers' drain sees every queued event.
	mu       sync.RWMutex
	closed   bool
	stopping chan struct{} // closed by Close: the workers drain, then stop
	// ctx ends when Close gives up waiting: the appends in progress end
	// and the events still queued are dropped.
	ctx     context.Context
	abandon context.CancelFunc
	workers sync.WaitGroup
}

// queued is an event waiting for a worker, after the event of after and
// before whatever waits for done.
type queued struct {
	event       store.Event
	after, done receipt
}

// receipt tells that a queued event was appended, or dropped. Its zero
// value is an event that has been.
type receipt struct{ done chan struct{} }

// wait waits until r's event was appended or dropped, or ctx ends, and
// reports which came first.
func (r receipt) wait(ctx context.Context) bool {
	if r.done == nil {
		return true
	}
	select {
	case <-r.done:
		return true
	case <-ctx.Done():
		return false
	}
}

// StartAppender starts the workers of an Appender appending to st; Close
// stops them.
func StartAppender(st store.Events, opts AppenderOptions) *Appender {
	opts.Workers = positive(opts.Workers, DefaultWorkers)
	opts.Queue = positive(opts.Queue, DefaultQueue)
	opts.FullWait = positive(opts.FullWait, DefaultFullWait)
	opts.HoldStart = positive(opts.HoldStart, DefaultHoldStart)
	a := &Appender{store: st, opts: opts, queue: make(chan queued, opts.Queue), stopping: make(chan struct{})}
	a.ctx, a.abandon = context.WithCancel(context.Background())
	for range opts.Workers {
		a.workers.Go(a.work)
	}
	return a
}

// Record queues e, stamped now. It returns at once unless the queue is
// full.
func (a *Appender) Record(now time.Time, e Event) {
	a.enqueue(event(now, e), receipt{})
}

// Span is the start of something (a direct call) whose end is still to
// come.
type Span struct {
	a     *Appender
	start store.Event
	hold  *time.Timer // queues the start alone once HoldStart has passed
	// mu makes the start queued once, by End or by hold.
	mu     sync.Mutex
	queued bool
	done   receipt
}

// Begin records e, stamped now, as the start of a span, and returns the
// span, whose End records its end. The start is queued with its end, or
// alone once HoldStart has passed.
func (a *Appender) Begin(now time.Time, e Event) *Span {
	s := &Span{a: a, start: event(now, e)}
	s.hold = time.AfterFunc(a.opts.HoldStart, func() { s.queueStart() })
	return s
}

// End records e, stamped now, as the end of s: it is appended after s's
// start.
func (s *Span) End(now time.Time, e Event) {
	s.hold.Stop()
	s.a.enqueue(event(now, e), s.queueStart())
}

// queueStart queues s's start unless it was, and returns its receipt.
func (s *Span) queueStart() receipt {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.queued {
		s.queued, s.done = true, s.a.enqueue(s.start, receipt{})
	}
	return s.done
}

// enqueue queues ev to be appended once the event of after has been, and
// returns ev's receipt. It returns at once unless the queue is full.
func (a *Appender) enqueue(ev store.Event, after receipt) receipt {
	q := queued{event: ev, after: after, done: receipt{make(chan struct{})}}
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.closed {
		ctx, cancel := context.WithTimeout(context.Background(), Timeout)
		defer cancel()
		if after.wait(ctx) {
			appendWithin(ctx, a.store, q.event)
		} else {
			a.drop(q.event, DropShutdown)
		}
		close(q.done.done)
		return q.done
	}
	select {
	case a.queue <- q:
		return q.done
	default:
	}
	full := time.NewTimer(a.opts.FullWait)
	defer full.Stop()
	select {
	case a.queue <- q:
	case <-full.C:
		a.drop(q.event, DropQueueFull)
		close(q.done.done)
	}
	return q.done
}

// Close stops queuing (a Record from now on appends on its caller's
// path), lets the workers append what is queued, and waits for them to
// stop. If ctx ends first, the appends in progress are cut short and
// what is still queued is dropped, counted; Close then returns ctx's
// error once the workers have stopped. It is idempotent; a nil Appender
// has nothing to close.
func (a *Appender) Close(ctx context.Context) error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	if !a.closed {
		a.closed = true
		close(a.stopping)
	}
	a.mu.Unlock()
	stopped := make(chan struct{})
	go func() {
		a.workers.Wait()
		close(stopped)
	}()
	select {
	case <-stopped:
		return nil
	case <-ctx.Done():
		a.abandon()
		<-stopped // each append ends with a.ctx
		return fmt.Errorf("admin events: the queue was not drained: %w", ctx.Err())
	}
}

// work appends queued events until Close, then those still queued.
func (a *Appender) work() {
	for {
		select {
		case q := <-a.queue:
			a.append(q)
		case <-a.stopping:
			for {
				select {
				case q := <-a.queue:
					a.append(q)
				default:
					return
				}
			}
		}
	}
}

// append appends q's event once the event it follows has been, unless
// the Appender was abandoned.
func (a *Appender) append(q queued) {
	defer close(q.done.done)
	if !q.after.wait(a.ctx) || a.ctx.Err() != nil {
		a.drop(q.event, DropShutdown)
		return
	}
	appendWithin(a.ctx, a.store, q.event)
}

// drop counts and logs an event not appended.
func (a *Appender) drop(e store.Event, reason string) {
	if a.opts.Dropped != nil {
		a.opts.Dropped(reason)
	}
	slog.Warn("admin event dropped", "kind", e.Kind, "reason", reason)
}

func positive[T int | time.Duration](v, otherwise T) T {
	if v > 0 {
		return v
	}
	return otherwise
}
