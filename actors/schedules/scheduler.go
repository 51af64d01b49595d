package schedules

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/clock"
	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/actors/store"
)

// The loop's pacing: it wakes at the next fire, and at least every
// MaxSleep to see schedules that another node or a restart changed;
// BufferPoll is how often a buffered tick looks at the run it waits for;
// CallTimeout bounds each store read or write and each start.
const (
	MaxSleep    = time.Minute
	BufferPoll  = time.Second
	CallTimeout = 30 * time.Second
)

// Runner starts and cancels runs, and reads a run's status: the run
// manager, through ManagerRunner.
type Runner interface {
	Start(ctx context.Context, req runs.StartRequest) (runs.StartResult, error)
	Cancel(ctx context.Context, id, reason string) (store.Run, error)
	// Status is the stored status of run id.
	Status(ctx context.Context, id string) (string, error)
}

// Counter counts fires by outcome (metrics.Metrics).
type Counter interface{ ScheduleFire(outcome string) }

// Leader decides which node of a cluster fires the schedules' ticks: the
// one that leads (node.SchedulesLeader, a lease). A tick fired by a
// leader that died before it recorded the fire is fired again by the
// next one under the same idempotency key (TickKey), which starts no
// second run.
type Leader interface {
	// Lead reports whether this node leads, trying to lead if no node does.
	Lead(ctx context.Context) bool
	// Leads reports, cheaply, whether this node still leads.
	Leads() bool
	// Interval is how often a node that does not lead tries again, and
	// how often the leader reads the schedules again.
	Interval() time.Duration
}

// Options configure a Scheduler.
type Options struct {
	Store   store.Store
	Runs    Runner
	Clock   clock.Clock // clock.System() when nil
	Metrics Counter     // may be nil
	// Leader, for a node of a cluster, says when it fires the ticks; nil
	// fires them all (a single node).
	Leader Leader
}

// Scheduler is the scheduling loop: one goroutine, from Start to Stop.
type Scheduler struct {
	opts   Options
	mu     sync.Mutex    // orders passes and triggers: one fire at a time
	wake   chan struct{} // a pending wake, at most one
	cancel context.CancelFunc
	done   chan struct{}
}

// Start starts the loop; Stop ends it.
func Start(opts Options) *Scheduler {
	if opts.Clock == nil {
		opts.Clock = clock.System()
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Scheduler{opts: opts, wake: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	go s.loop(ctx)
	return s
}

// Stop ends the loop and waits for it, up to ctx; a fire under way is
// cancelled. A nil Scheduler is stopped.
func (s *Scheduler) Stop(ctx context.Context) error {
	if s == nil {
		return nil
	}
	s.cancel()
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop the scheduler: %w", ctx.Err())
	}
}

// Poke makes the loop plan again now: a schedule was created, changed or
// unpaused.
func (s *Scheduler) Poke() {
	if s == nil {
		return
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Changed is told that a schedule's definition was written: it waits for
// a fire under way to end (so that none started on the old definition
// after Changed returns) and makes the loop plan again.
func (s *Scheduler) Changed() {
	if s == nil {
		return
	}
	// An empty critical section: it waits for the fire under way.
	s.mu.Lock()
	s.mu.Unlock()
	s.Poke()
}

func (s *Scheduler) loop(ctx context.Context) {
	defer close(s.done)
	for {
		next := s.pass(ctx)
		d := min(max(next.Sub(s.opts.Clock.Now()), 0), s.maxSleep())
		timer := s.opts.Clock.AfterFunc(d, s.Poke)
		select {
		case <-s.wake:
			timer.Stop()
		case <-ctx.Done():
			timer.Stop()
			return
		}
	}
}

// maxSleep is the longest the loop sleeps: MaxSleep, or a cluster
// leader's interval, so that a node sees another's changes and takes
// over from a leader that died within it.
func (s *Scheduler) maxSleep() time.Duration {
	if s.opts.Leader == nil {
		return MaxSleep
	}
	return min(MaxSleep, s.opts.Leader.Interval())
}

// leads reports whether this node fires ticks now: always on a single
// node; in a cluster, while it holds the lead it took.
func (s *Scheduler) leads() bool { return s.opts.Leader == nil || s.opts.Leader.Leads() }

// pass deals with every schedule once and answers when it must wake next.
// In a cluster, only the leader does; a node takes the lead once a
// schedule exists.
func (s *Scheduler) pass(ctx context.Context) time.Time {
	now := s.opts.Clock.Now()
	next := now.Add(MaxSleep)
	list, err := within(ctx, func(ctx context.Context) ([]store.Schedule, error) { return s.opts.Store.ListSchedules(ctx) })
	if err != nil {
		slog.Warn("schedules: list", "err", err)
		return next
	}
	if l := s.opts.Leader; l != nil && len(list) > 0 { // no node leads a cluster with no schedule
		lctx, cancel := context.WithTimeout(ctx, CallTimeout)
		lead := l.Lead(lctx)
		cancel()
		if !lead {
			return now.Add(l.Interval())
		}
	}
	for _, sc := range list {
		if ctx.Err() != nil {
			return next
		}
		if at := s.tick(ctx, sc.ID); !at.IsZero() && at.Before(next) {
			next = at
		}
	}
	return next
}

// tick brings schedule id up to now and answers when it is next due
// (zero for never or paused).
func (s *Scheduler) tick(ctx context.Context, id string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, err := within(ctx, func(ctx context.Context) (store.Schedule, error) { return s.opts.Store.GetSchedule(ctx, id) })
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			slog.Warn("schedules: read", "schedule", id, "err", err)
		}
		return time.Time{}
	}
	if sc.Paused || !s.leads() {
		return time.Time{}
	}
	spec, err := Compile(sc.Spec)
	if err != nil {
		slog.Warn("schedules: the stored spec does not compile", "schedule", id, "err", err)
		return time.Time{}
	}
	f := s.firing(ctx, sc)
	now := s.opts.Clock.Now()
	plan := PlanAt(sc, spec, now)
	if plan.Missed > 0 {
		f.st.Missed += plan.Missed
		f.st.Skipped += plan.Skipped
		f.count(OutcomeMissed, plan.Missed-plan.Skipped)
		f.count(OutcomeSkipped, plan.Skipped)
		f.record(audit.ScheduleMissed, map[string]any{"missed": plan.Missed, "skipped": plan.Skipped,
			"caught_up": plan.Missed - plan.Skipped, "catchup_window_seconds": sc.CatchupWindowSeconds})
	}
	if f.st.BufferedTickMs != 0 && !f.active() {
		buffered := time.UnixMilli(f.st.BufferedTickMs)
		f.st.BufferedTickMs = 0
		f.start(buffered, false)
	}
	for _, t := range plan.Due {
		f.fire(t)
	}
	if !plan.Last.IsZero() {
		f.st.LastTickMs = plan.Last.UnixMilli()
	}
	s.save(ctx, f)
	next := plan.Next
	if f.st.BufferedTickMs != 0 && (next.IsZero() || now.Add(BufferPoll).Before(next)) {
		next = now.Add(BufferPoll)
	}
	return next
}

// save writes f's state if it changed, for a tick while this node still
// leads: a node that lost the lead leaves the state to the new leader,
// which fires again what this one fired after (the same runs, by their
// keys) rather than see its record go back.
func (s *Scheduler) save(ctx context.Context, f *firing) {
	if f.st == f.was || (!f.trigger && !s.leads()) {
		return
	}
	if _, err := within(ctx, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, s.opts.Store.SaveScheduleState(ctx, f.sc.ID, f.st)
	}); err != nil && !errors.Is(err, store.ErrNotFound) {
		slog.Warn("schedules: save state", "schedule", f.sc.ID, "err", err)
	}
}

// Trigger fires schedule id now, out of its spec, under its overlap
// policy (a paused schedule too: the owner asked). It answers the
// schedule as the fire left it.
func (s *Scheduler) Trigger(ctx context.Context, id string) (store.Schedule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, err := s.opts.Store.GetSchedule(ctx, id)
	if err != nil {
		return store.Schedule{}, err
	}
	f := s.firing(ctx, sc)
	f.trigger = true
	f.fire(s.opts.Clock.Now())
	s.save(ctx, f)
	sc.State = f.st
	return sc, nil
}

// within runs fn under CallTimeout.
func within[T any](ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	return fn(ctx)
}
