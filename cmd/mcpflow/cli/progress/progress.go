// Package progress owns the live view of one run for `mcpflow run
// --follow`: it subscribes to the run's events and renders each step as it
// happens, foreach item progress and the run's final result, redrawing a
// status line in a terminal and printing plain lines otherwise.
package progress

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

// Options shape the rendering. Terminal redraws a status line in place
// with ANSI escapes; otherwise one plain line is printed per event, with
// no escape codes. Width is the terminal's width in columns (0: 80).
type Options struct {
	Terminal bool
	Width    int
}

// Final is how the run ended as Follow saw it: a terminal status
// (completed, failed, cancelled) or interrupted, which waits for a resume.
type Final struct {
	Status, Outcome string
	Output          map[string]any
	Error           string
}

// Tuning of Follow; tests shorten them.
var (
	// queueSize bounds the notifications waiting for Follow's goroutine.
	queueSize = 1024
	// idleProbe is how long Follow waits for an event before it asks the
	// server how the run is (and so notices a lost connection).
	idleProbe = 10 * time.Second
	// tickEvery is how often the terminal's status line is redrawn while
	// no event comes.
	tickEvery = 250 * time.Millisecond
	// maxResubscribes bounds the subscriptions made again in a row without
	// an event coming in between.
	maxResubscribes = 20
)

// Follow subscribes to runID on c and writes its progress to w until the
// run ends or is interrupted, then writes how it ended and returns it. It
// takes over c's notification handler while it runs (and leaves none). A
// lagged subscription, or a notification it had to drop because its queue
// was full, is made good by subscribing again after the last event it
// has, transparently. It returns an error when ctx ends, the connection
// is lost or the server refuses; Final then holds the last status seen.
func Follow(ctx context.Context, c *client.Client, runID string, w io.Writer, opts Options) (Final, error) {
	return newFollower(c, runID, w, opts).run(ctx)
}

func newFollower(c *client.Client, runID string, w io.Writer, opts Options) *follower {
	return &follower{c: c, runID: runID, queue: make(chan client.Notification, queueSize), dropped: make(chan struct{}, 1), retired: map[string]bool{}, r: newRender(w, runID, opts)}
}

// run is Follow.
func (f *follower) run(ctx context.Context) (Final, error) {
	f.c.OnNotification(f.notify)
	defer f.c.OnNotification(nil)
	final, err := f.follow(ctx)
	if err == nil && f.r.err != nil {
		err = f.r.err
	}
	return final, err
}

// follower is one Follow: the subscription it holds, the last event it
// rendered, and the queue the client's reader fills.
type follower struct {
	c     *client.Client
	runID string
	r     *render

	queue   chan client.Notification
	dropped chan struct{} // signalled when notify dropped a notification
	lost    atomic.Bool   // notify dropped one since the last resubscribe
	// retired are the subscriptions given up on: notify drops what they
	// still send without taking room in the queue.
	mu      sync.Mutex
	retired map[string]bool

	sub  string // the current subscription's id
	last int64  // the last event rendered; events come after it
	// live is the run's last sequence number when it was first subscribed
	// to: an interrupt before it was resumed since, one at or after it is
	// where the run waits now.
	live int64
}

// notify runs on the client's reader: it queues n without waiting, and
// notes a drop so that Follow subscribes again once it has rendered what
// was queued before it.
func (f *follower) notify(n client.Notification) {
	var of struct {
		SubscriptionID string `json:"subscription_id"`
	}
	if json.Unmarshal(n.Params, &of) == nil && f.isRetired(of.SubscriptionID) {
		return
	}
	select {
	case f.queue <- n:
	default:
		// What the subscription sends after a drop comes after the gap:
		// it would only take room from the one made again.
		if of.SubscriptionID != "" {
			f.retire(of.SubscriptionID)
		}
		f.lost.Store(true)
		select {
		case f.dropped <- struct{}{}:
		default:
		}
	}
}

func (f *follower) follow(ctx context.Context) (Final, error) {
	if err := f.subscribe(ctx, false); err != nil {
		return f.final(), err
	}
	if f.sub == "" {
		// The run ended with no events to send (stored before events
		// were): say how it ended from its record.
		return f.inspected(ctx)
	}
	defer f.unsubscribe(ctx)
	idle := time.NewTimer(idleProbe)
	defer idle.Stop()
	var ticks <-chan time.Time
	if f.r.opts.Terminal {
		t := time.NewTicker(tickEvery)
		defer t.Stop()
		ticks = t.C
	}
	resubscribes := 0
	for {
		select {
		case <-ctx.Done():
			return f.final(), fmt.Errorf("follow run %s: %w", f.runID, ctx.Err())
		case now := <-ticks:
			f.r.tick(now)
		case <-f.dropped:
			// What was queued before the drop comes before the event
			// dropped: render it first, so that the subscription made
			// again starts after it with the queue empty. Subscribing
			// again at once left those events in the queue, stale, where
			// they took the room of the new subscription's, which were
			// dropped in turn: a slow terminal made Follow give up.
			next, progressed, err := f.drain()
			if err != nil {
				return f.final(), err
			}
			if progressed {
				resubscribes = 0
				idle.Reset(idleProbe)
			}
			if next == ended {
				return f.end(), nil
			}
			if err := f.resubscribe(ctx, &resubscribes); err != nil {
				return f.final(), err
			}
		case <-idle.C:
			if done, err := f.probe(ctx, &resubscribes); done || err != nil {
				return f.final(), err
			}
			idle.Reset(idleProbe)
		case n := <-f.queue:
			next, err := f.handle(n)
			if err != nil {
				return f.final(), err
			}
			switch next {
			case ended:
				return f.end(), nil
			case again:
				if err := f.resubscribe(ctx, &resubscribes); err != nil {
					return f.final(), err
				}
			case rendered:
				resubscribes = 0
				idle.Reset(idleProbe)
			}
		}
		if f.sub == "" {
			// A subscription made again had nothing more to send.
			return f.inspected(ctx)
		}
	}
}

// What handling a notification leads to.
type next int

const (
	skipped  next = iota // nothing: not of this subscription, or seen
	rendered             // the next event was rendered
	again                // subscribe again: a gap, or the subscription lagged
	ended                // the run ended or waits in an interrupt
)

// handle renders the next event n holds, or says what to do instead.
func (f *follower) handle(n client.Notification) (next, error) {
	switch n.Method {
	case p.NotifyRunLagged:
		var lag p.LaggedNotification
		if err := json.Unmarshal(n.Params, &lag); err != nil {
			return skipped, fmt.Errorf("follow run %s: decode %s: %w", f.runID, n.Method, err)
		}
		if lag.SubscriptionID == f.sub {
			return again, nil
		}
	case p.NotifyRunEvent:
		var e p.RunEventNotification
		if err := json.Unmarshal(n.Params, &e); err != nil {
			return skipped, fmt.Errorf("follow run %s: decode %s: %w", f.runID, n.Method, err)
		}
		if e.SubscriptionID != f.sub || e.RunID != f.runID || e.Seq <= f.last {
			return skipped, nil
		}
		if e.Seq != f.last+1 {
			return again, nil // get the events after the last one rendered
		}
		f.last = e.Seq
		f.r.event(e.RunEvent, time.Now())
		switch {
		case e.Status != nil && e.Status.Terminal:
			f.sub = "" // the subscription ended with the run
			return ended, nil
		case e.Status != nil && e.Status.Status == store.RunInterrupted && e.Seq >= f.live:
			return ended, nil
		}
		return rendered, nil
	}
	return skipped, nil
}

// drain handles what the queue holds now, after a drop: every event
// queued before the drop, in order, up to a gap (an event queued once
// there was room again, after the one dropped), the run's end, or an
// empty queue. It says whether the run ended there and whether an event
// was rendered.
func (f *follower) drain() (next, bool, error) {
	progressed := false
	for {
		select {
		case n := <-f.queue:
			next, err := f.handle(n)
			switch {
			case err != nil:
				return skipped, progressed, err
			case next == rendered:
				progressed = true
			case next == ended || next == again:
				return next, progressed || next == ended, nil
			}
		default:
			return again, progressed, nil
		}
	}
}

// subscribe subscribes to the run's events after the last one rendered
// (from the first when again is false). f.sub is "" when the server says
// no event will follow.
func (f *follower) subscribe(ctx context.Context, again bool) error {
	params := p.SubscribeRunParams{RunID: f.runID}
	if again {
		params.AfterSequence = &f.last
	}
	// Drops so far were of subscriptions given up on.
	select {
	case <-f.dropped:
	default:
	}
	f.lost.Store(false)
	res, err := f.c.SubscribeRun(ctx, params)
	if err != nil {
		return fmt.Errorf("follow run %s: subscribe after event %d: %w", f.runID, f.last, err)
	}
	if !again {
		f.live = res.LastSequence
	}
	f.sub = ""
	if res.Active {
		f.sub = res.SubscriptionID
	}
	return nil
}

// resubscribe ends the current subscription and subscribes after the last
// event rendered; too many in a row without an event is an error.
func (f *follower) resubscribe(ctx context.Context, count *int) error {
	*count++
	if *count > maxResubscribes {
		return fmt.Errorf("follow run %s: subscribed %d times in a row after event %d without getting further", f.runID, maxResubscribes, f.last)
	}
	f.unsubscribe(ctx)
	return f.subscribe(ctx, true)
}

func (f *follower) isRetired(sub string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.retired[sub]
}

// retire gives up on subscription sub: notify drops what it sends.
func (f *follower) retire(sub string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.retired[sub] = true
}

// unsubscribe ends the current subscription, if any, best effort.
func (f *follower) unsubscribe(ctx context.Context) {
	if f.sub == "" {
		return
	}
	f.retire(f.sub)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	_, _ = f.c.UnsubscribeRun(ctx, f.sub)
	f.sub = ""
}

// probe asks how the run is after a silence: a lost connection is an
// error; a run that has changed status without its events reaching us is
// subscribed to again.
func (f *follower) probe(ctx context.Context, count *int) (bool, error) {
	run, err := f.c.InspectRun(ctx, f.runID)
	if err != nil {
		return false, fmt.Errorf("follow run %s: no event for %s, then: %w", f.runID, idleProbe, err)
	}
	if run.Status == f.r.final.Status && !f.lost.Load() {
		return false, nil
	}
	if err := f.resubscribe(ctx, count); err != nil {
		return false, err
	}
	if f.sub == "" {
		_, err := f.inspected(ctx)
		return true, err
	}
	return false, nil
}

// inspected renders the run's end from its record, for a run whose
// events do not tell it.
func (f *follower) inspected(ctx context.Context) (Final, error) {
	run, err := f.c.InspectRun(ctx, f.runID)
	if err != nil {
		return f.final(), fmt.Errorf("follow run %s: inspect: %w", f.runID, err)
	}
	final := Final{Status: run.Status, Output: run.Output}
	if final.Status == store.RunCompleted && final.Output == nil {
		final.Output = map[string]any{}
	}
	if run.Outcome != nil {
		final.Outcome = *run.Outcome
	}
	if run.Error != nil {
		final.Error = *run.Error
	}
	f.r.final = final
	f.r.finish(final)
	return final, nil
}

// end renders and returns the end the last event told.
func (f *follower) end() Final {
	final := f.final()
	f.r.finish(final)
	return final
}

// final is the run's status as the events so far tell it.
func (f *follower) final() Final {
	return f.r.final
}
