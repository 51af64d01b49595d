package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcpflow/mcpflow/actors/supervisor"
)

// DefaultShutdownTimeout bounds Shutdown when its context has no
// deadline; `mcpflow serve --shutdown-timeout` sets it.
const DefaultShutdownTimeout = 10 * time.Second

// Shares of the shutdown budget. Requests in flight get up to edgeGrace to
// be answered. The last finishReserve of the budget is the finish's (the
// store closes); before it, the sessions' stage has each session's
// CloseTimeout plus supervisor.KillGrace; the runs' drain has what comes
// before, of which haltReserve is kept for halted runs to end the commit
// in progress.
const (
	edgeGrace     = time.Second
	haltReserve   = time.Second
	finishReserve = time.Second
)

// stopPlan is when each stage of a stop must be done: each stage ends by
// its own deadline, so that one that overruns is cut short there and
// never takes the time of the next.
type stopPlan struct {
	drainUntil time.Time // live runs go on until then, then halt
	drained    time.Time // the edge and the drain are done
	sessions   time.Time // every session is closed, or its peer killed
	finished   time.Time // the store is closed: the whole budget
}

// planStop splits the budget from now to deadline into the stages'
// deadlines, closeTimeout being each session's CloseTimeout. A budget
// too short for every share gives the later stages theirs first.
func planStop(now, deadline time.Time, closeTimeout time.Duration) stopPlan {
	at := func(t time.Time) time.Time {
		if t.Before(now) {
			return now
		}
		return t
	}
	finishing := at(deadline.Add(-finishReserve))
	closing := at(finishing.Add(-(closeTimeout + supervisor.KillGrace)))
	return stopPlan{drainUntil: at(closing.Add(-haltReserve)), drained: closing, sessions: finishing, finished: deadline}
}

// Shutdown stops the service within ctx's deadline (DefaultShutdownTimeout
// when it has none). It first marks the App as stopping (/readyz answers
// 503, a service manager hears STOPPING=1), then stops in stages, each
// with its own deadline (planStop):
//
//  1. No new runs: runs.start, runs.resume and workflow capability calls
//     are refused (-32000), and the requests waiting for their run answer
//     at once with its current, committed state.
//  2. The edge: the listener closes; requests in flight get edgeGrace to
//     be answered, then their contexts are cancelled and every WebSocket
//     is closed (1001).
//  3. The runs drain: live runs go on, so a step in flight may finish and
//     be committed, until only what the later stages need is left of the
//     budget; the rest halt at a commit boundary and stay running in the
//     store, for the next start to recover (resumed, or failed when a call
//     they had out is not safe to repeat). Nothing committed is lost.
//  4. The sessions: the background catalog listing stops, then the
//     supervisor stops every session actor at once: each cancels its calls
//     in flight and closes its upstream within its CloseTimeout, or has
//     its stdio server's process group killed; what is still closing
//     supervisor.KillGrace before the stage's deadline is killed then.
//  5. The finish: the reply routers and the pruning of finished runs stop
//     (a batch in progress commits or fails whole), the admin events of
//     direct calls still queued are appended, then the store closes, once
//     no actor can write it, and its lock is released.
//  6. With tracing on, the spans not yet exported are flushed within what
//     is left of the budget.
//
// Nothing acknowledged is lost when a stage other than the store's close
// overruns or fails: every run's progress was committed before it was
// acknowledged, and the next start recovers what was cut off. Such a
// stage is logged as a warning and Shutdown goes on; its error then wraps
// ErrStopCutShort, on which `mcpflow serve` still exits 0. When the store
// could not be closed (or its lock released), the error does not wrap it,
// and serve exits 1.
func (a *App) Shutdown(ctx context.Context) error {
	start := time.Now()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultShutdownTimeout)
		defer cancel()
	}
	deadline, _ := ctx.Deadline()
	plan := planStop(start, deadline, a.closeTimeout)
	a.life.stopping()                    // /readyz 503, STOPPING=1
	unscheduled := a.scheduler.Stop(ctx) // no fire starts a run from here on
	a.runs.StopAccepting()

	cut := []error{unscheduled, stage(ctx, "drain", plan.drained, a.stopEdgeAndRuns(plan))}
	cut = append(cut, stage(ctx, "sessions", plan.sessions, func(ctx context.Context) error {
		// Every connection is closed: so is every subscription. The
		// supervisor releases the connections it owned as their sessions
		// close.
		return errors.Join(a.member.quiet(ctx), a.hub.Close(ctx), a.stopRefresher(ctx), a.supervisor.Stop(ctx))
	}))
	var closed error
	cut = append(cut, stage(ctx, "finish", plan.finished, func(ctx context.Context) error {
		// Leaving the cluster gives every other lease up.
		err := errors.Join(a.replies.Stop(ctx), a.member.stop(ctx), a.pruner.Stop(ctx), a.audit.Close(ctx))
		closed = a.closeStore()
		return err
	}))
	a.pool.Close()         // no session is left to use its connections
	a.tracer.shutdown(ctx) // the runs' spans, flushed within what is left of the budget
	if closed != nil {
		return errors.Join(append([]error{closed}, cut...)...)
	}
	if err := errors.Join(cut...); err != nil {
		return fmt.Errorf("%w: %w", ErrStopCutShort, err)
	}
	slog.Info("mcpflow stopped", "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// ErrStopCutShort is wrapped by Shutdown's error when a stage of the stop
// failed or was cut short at its deadline and the store still closed:
// nothing acknowledged was lost.
var ErrStopCutShort = errors.New("the stop was cut short, nothing acknowledged lost")

// stopEdgeAndRuns is the stop's first stages: the edge closes, then the
// runs drain until plan.drainUntil and the rest halt.
func (a *App) stopEdgeAndRuns(plan stopPlan) func(context.Context) error {
	return func(ctx context.Context) error {
		var errs []error
		grace := min(edgeGrace, time.Until(plan.drainUntil)/4)
		served := make(chan error, 1)
		if a.http != nil {
			go func() { served <- a.http.Shutdown(ctx) }()
		} else {
			served <- nil
		}
		a.face.stop() // its 2025-era sessions close, their calls ended first (their runs go on)
		errs = append(errs, a.edge.Shutdown(ctx, grace))
		// Every handler has returned; what http.Server.Shutdown may still
		// wait for is a client stalled mid-request: it gets a grace, then
		// is cut.
		select {
		case err := <-served:
			errs = append(errs, err)
		case <-time.After(grace):
			if a.http != nil {
				_ = a.http.Close()
			}
		}
		drained, err := a.runs.Drain(ctx, plan.drainUntil)
		if drained.Finished+drained.Halted > 0 {
			slog.Info("runs stopped", "finished", drained.Finished, "halted", drained.Halted)
		}
		return errors.Join(append(errs, err)...)
	}
}

// stage runs one stage of a stop under a context that ends at its
// deadline (or with parent); if the stage fails or overruns, it logs a
// warning and returns the stage's error, naming it.
func stage(parent context.Context, name string, deadline time.Time, run func(context.Context) error) error {
	ctx, cancel := context.WithDeadline(parent, deadline)
	defer cancel()
	err := run(ctx)
	if err == nil {
		return nil
	}
	slog.Warn("stop: a stage failed or was cut short at its deadline; what it cut off, the next start recovers",
		"stage", name, "err", err)
	return fmt.Errorf("stop %s: %w", name, err)
}
