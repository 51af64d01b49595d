package schedules

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/actors/store"
)

// The overlap policies: what a tick does while the schedule's last run
// is still running.
const (
	OverlapSkip        = "skip"         // nothing: the tick is skipped
	OverlapBufferOne   = "buffer_one"   // held, one at most, until the run ends
	OverlapAllowAll    = "allow_all"    // a run beside it
	OverlapCancelOther = "cancel_other" // the run is cancelled, and a new one started
)

// Overlaps are the policies, in the manifest's order.
var Overlaps = []string{OverlapSkip, OverlapBufferOne, OverlapAllowAll, OverlapCancelOther}

// The outcomes of fires, as the metric counts them.
const (
	OutcomeStarted      = "started"      // a run started
	OutcomeDeduplicated = "deduplicated" // the tick's run had been started already (its idempotency key)
	OutcomeBuffered     = "buffered"     // held until the last run ends (buffer_one)
	OutcomeSkipped      = "skipped"      // not fired: overlap, or beyond the catch-up window
	OutcomeMissed       = "missed"       // fired late, within the catch-up window
	OutcomeFailed       = "failed"       // the start was refused
)

// StartedBy is what a schedule's runs are started by.
func StartedBy(id string) string { return "schedule:" + id }

// TickKey is the idempotency key of a schedule's tick: a tick starts one
// run, however often it is fired (a node's retry, or two nodes at once).
func TickKey(id string, tick time.Time) string {
	return fmt.Sprintf("schedule:%s:%d", id, tick.Unix())
}

// firing is one schedule's state as a pass or a trigger changes it.
type firing struct {
	s       *Scheduler
	ctx     context.Context
	sc      store.Schedule
	st, was store.ScheduleState
	trigger bool // a trigger, not a tick of the spec
}

func (s *Scheduler) firing(ctx context.Context, sc store.Schedule) *firing {
	f := &firing{s: s, ctx: ctx, sc: sc, st: sc.State, was: sc.State}
	f.active() // brings LastOutcome up to date
	return f
}

// active reports whether the schedule's last run is still running, and
// records its status as the last outcome.
func (f *firing) active() bool {
	if f.st.LastRunID == "" {
		return false
	}
	status, err := within(f.ctx, func(ctx context.Context) (string, error) { return f.s.opts.Runs.Status(ctx, f.st.LastRunID) })
	if errors.Is(err, store.ErrNotFound) { // deleted, or pruned once retention passed: it ended long ago
		return false
	}
	if err != nil {
		slog.Warn("schedules: the last run's status", "schedule", f.sc.ID, "run_id", f.st.LastRunID, "err", err)
		return false
	}
	f.st.LastOutcome = status
	return status == store.RunRunning
}

// fire fires tick under the overlap policy.
func (f *firing) fire(tick time.Time) {
	if !f.active() {
		f.start(tick, true)
		return
	}
	switch f.sc.Overlap {
	case OverlapAllowAll:
		f.start(tick, true)
	case OverlapCancelOther:
		reason := "cancelled by schedule " + f.sc.ID + " (overlap cancel_other)"
		if _, err := within(f.ctx, func(ctx context.Context) (store.Run, error) {
			return f.s.opts.Runs.Cancel(ctx, f.st.LastRunID, reason)
		}); err != nil {
			slog.Warn("schedules: cancel the last run", "schedule", f.sc.ID, "run_id", f.st.LastRunID, "err", err)
		}
		f.start(tick, true)
	case OverlapBufferOne:
		if f.st.BufferedTickMs == 0 {
			f.st.BufferedTickMs = tick.UnixMilli()
			f.count(OutcomeBuffered, 1)
			return
		}
		f.skip(tick, "buffer_one holds a tick already")
	default:
		f.skip(tick, "the last run is still running")
	}
}

// skip counts tick as skipped.
func (f *firing) skip(tick time.Time, why string) {
	f.st.Skipped++
	f.count(OutcomeSkipped, 1)
	f.record(audit.ScheduleSkipped, map[string]any{"tick_epoch_ms": tick.UnixMilli(), "reason": why,
		"last_run_id": f.st.LastRunID})
}

// start starts the run of tick (a trigger's time, for a trigger).
func (f *firing) start(tick time.Time, fresh bool) {
	if !f.trigger && !f.s.leads() {
		return // the new leader fires it
	}
	key := TickKey(f.sc.ID, tick)
	if f.trigger {
		key = fmt.Sprintf("schedule:%s:trigger:%d", f.sc.ID, tick.UnixMilli())
	}
	res, err := within(f.ctx, func(ctx context.Context) (runs.StartResult, error) {
		return f.s.opts.Runs.Start(ctx, runs.StartRequest{DeploymentID: f.sc.DeploymentID, Input: f.sc.WorkflowInput,
			StartedBy: StartedBy(f.sc.ID), IdempotencyKey: key})
	})
	now := f.s.opts.Clock.Now()
	f.st.LastFireMs = now.UnixMilli()
	payload := map[string]any{"tick_epoch_ms": tick.UnixMilli(), "trigger": f.trigger, "buffered": !fresh}
	switch {
	case err != nil:
		f.st.LastOutcome = "start_failed"
		payload["outcome"], payload["error"] = OutcomeFailed, err.Error()
		f.count(OutcomeFailed, 1)
	case res.Unrunnable != nil:
		f.st.LastOutcome = "unrunnable"
		payload["outcome"] = OutcomeFailed
		f.count(OutcomeFailed, 1)
	default:
		outcome := OutcomeStarted
		if res.Deduplicated {
			outcome = OutcomeDeduplicated
		}
		f.st.Fired++
		f.st.LastRunID, f.st.LastOutcome = res.Run.ID, res.Run.Status
		payload["outcome"], payload["run_id"] = outcome, res.Run.ID
		f.count(outcome, 1)
	}
	f.record(audit.ScheduleFired, payload)
}

func (f *firing) count(outcome string, n int64) {
	if f.s.opts.Metrics == nil {
		return
	}
	for range n {
		f.s.opts.Metrics.ScheduleFire(outcome)
	}
}

// record appends an admin event about the schedule.
func (f *firing) record(kind string, payload map[string]any) {
	payload["schedule_id"] = f.sc.ID
	audit.Record(f.ctx, f.s.opts.Store, f.s.opts.Clock.Now(), audit.Event{Kind: kind, WorkflowName: f.sc.DeploymentID, Payload: payload})
}

// ManagerRunner is the run manager m as a Runner, reading statuses from st.
func ManagerRunner(m *runs.Manager, st store.Runs) Runner { return managerRunner{m, st} }

type managerRunner struct {
	*runs.Manager
	st store.Runs
}

func (r managerRunner) Status(ctx context.Context, id string) (string, error) {
	run, err := r.st.GetRun(ctx, id)
	return run.Status, err
}
