package service

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/schedules"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// DefaultCatchupWindow is a schedule's catch-up window when create or
// update does not give one.
const DefaultCatchupWindow = 300

// nextFires is how many fire times inspect shows.
const nextFires = 5

// ScheduleLoop is the scheduling loop the methods tell of changes and
// trigger through (schedules.Scheduler).
type ScheduleLoop interface {
	// Changed is told of each write of a definition: once it returns,
	// no fire on the old definition is under way.
	Changed()
	Trigger(ctx context.Context, id string) (store.Schedule, error)
}

// scheduleMethods are workflow.schedules.*: changing a schedule, which
// starts runs unattended, is the admin's; reading them is read.
func (s *Service) scheduleMethods() map[string]rpc.Method {
	return map[string]rpc.Method{
		protocol.MethodSchedulesCreate:  forAdmin(s.createSchedule),
		protocol.MethodSchedulesInspect: forRead(s.inspectSchedule),
		protocol.MethodSchedulesList:    forRead(s.listSchedules),
		protocol.MethodSchedulesUpdate:  forAdmin(s.updateSchedule),
		protocol.MethodSchedulesPause:   forAdmin(s.pauseSchedule),
		protocol.MethodSchedulesUnpause: forAdmin(s.unpauseSchedule),
		protocol.MethodSchedulesDelete:  forAdmin(s.deleteSchedule),
		protocol.MethodSchedulesTrigger: forAdmin(s.triggerSchedule),
	}
}

// scheduleDef checks a definition given to create or update and returns
// it as stored, active from now.
func (s *Service) scheduleDef(ctx context.Context, d protocol.ScheduleDefinition) (store.ScheduleDef, error) {
	if !store.ValidAuthID(d.ID) {
		return store.ScheduleDef{}, invalid("schedule id must start with alphanumeric or underscore and contain only [A-Za-z0-9_.-]")
	}
	spec := store.ScheduleSpec(d.Spec)
	if _, err := schedules.Compile(spec); err != nil {
		return store.ScheduleDef{}, invalid("schedule %q: %v", d.ID, err)
	}
	overlap := d.Overlap
	if overlap == "" {
		overlap = schedules.OverlapSkip
	}
	if !slices.Contains(schedules.Overlaps, overlap) {
		return store.ScheduleDef{}, invalid("schedule %q: overlap must be one of %v", d.ID, schedules.Overlaps)
	}
	window := DefaultCatchupWindow
	if d.CatchupWindowSeconds != nil {
		window = *d.CatchupWindowSeconds
	}
	if _, err := s.Store.GetDeployment(ctx, d.DeploymentID); err != nil {
		return store.ScheduleDef{}, storeErr(err, "workflow deployment "+strconv.Quote(d.DeploymentID))
	}
	now := s.now().UnixMilli()
	return store.ScheduleDef{ID: d.ID, DeploymentID: d.DeploymentID, WorkflowInput: d.WorkflowInput, Spec: spec,
		Overlap: overlap, CatchupWindowSeconds: window, Paused: d.Paused, CreatedAtMs: now, ActiveSinceMs: now}, nil
}

func (s *Service) createSchedule(ctx context.Context, p protocol.ScheduleParams) (protocol.ScheduleResult, error) {
	def, err := s.scheduleDef(ctx, p.Schedule)
	if err != nil {
		return protocol.ScheduleResult{}, err
	}
	sc := store.Schedule{ScheduleDef: def}
	if err := s.Store.CreateSchedule(ctx, sc); err != nil {
		if errors.Is(err, store.ErrExists) {
			return protocol.ScheduleResult{}, invalid("schedule %q already exists: update it, or delete it first", def.ID)
		}
		return protocol.ScheduleResult{}, storeErr(err, scheduleWhat(def.ID))
	}
	return s.scheduleChanged(ctx, sc, audit.ScheduleCreated)
}

func (s *Service) updateSchedule(ctx context.Context, p protocol.ScheduleParams) (protocol.ScheduleResult, error) {
	sc, err := s.Store.GetSchedule(ctx, p.Schedule.ID)
	if err != nil {
		return protocol.ScheduleResult{}, storeErr(err, scheduleWhat(p.Schedule.ID))
	}
	def, err := s.scheduleDef(ctx, p.Schedule)
	if err != nil {
		return protocol.ScheduleResult{}, err
	}
	def.CreatedAtMs = sc.CreatedAtMs
	return s.saveScheduleDef(ctx, sc, def, audit.ScheduleUpdated)
}

func (s *Service) pauseSchedule(ctx context.Context, p protocol.PauseScheduleParams) (protocol.ScheduleResult, error) {
	return s.setPaused(ctx, p, true, audit.SchedulePaused)
}

func (s *Service) unpauseSchedule(ctx context.Context, p protocol.PauseScheduleParams) (protocol.ScheduleResult, error) {
	return s.setPaused(ctx, p, false, audit.ScheduleUnpaused)
}

// setPaused pauses or unpauses a schedule with a note. An unpaused
// schedule is active from now: the ticks of its pause are not caught up.
func (s *Service) setPaused(ctx context.Context, p protocol.PauseScheduleParams, paused bool, kind string) (protocol.ScheduleResult, error) {
	sc, err := s.Store.GetSchedule(ctx, p.ScheduleID)
	if err != nil {
		return protocol.ScheduleResult{}, storeErr(err, scheduleWhat(p.ScheduleID))
	}
	def := sc.ScheduleDef
	def.Note = p.Note
	if sc.Paused && !paused {
		def.ActiveSinceMs = s.now().UnixMilli()
	}
	def.Paused = paused
	return s.saveScheduleDef(ctx, sc, def, kind)
}

// saveScheduleDef stores sc's new definition.
func (s *Service) saveScheduleDef(ctx context.Context, sc store.Schedule, def store.ScheduleDef, kind string) (protocol.ScheduleResult, error) {
	if err := s.Store.UpdateSchedule(ctx, def); err != nil {
		return protocol.ScheduleResult{}, storeErr(err, scheduleWhat(def.ID))
	}
	sc.ScheduleDef = def
	return s.scheduleChanged(ctx, sc, kind)
}

// scheduleChanged records the change, tells the loop, and answers sc.
func (s *Service) scheduleChanged(ctx context.Context, sc store.Schedule, kind string) (protocol.ScheduleResult, error) {
	payload := protocol.Object{"schedule_id": sc.ID, "deployment_id": sc.DeploymentID, "paused": sc.Paused}
	if sc.Note != "" {
		payload["note"] = sc.Note
	}
	s.record(ctx, audit.Event{Kind: kind, WorkflowName: sc.DeploymentID, Payload: payload})
	if s.Schedules != nil {
		s.Schedules.Changed()
	}
	return protocol.ScheduleResult{Schedule: schedulePayload(sc, s.now())}, nil
}

func (s *Service) inspectSchedule(ctx context.Context, p protocol.ScheduleIDParams) (protocol.Schedule, error) {
	sc, err := s.Store.GetSchedule(ctx, p.ScheduleID)
	if err != nil {
		return protocol.Schedule{}, storeErr(err, scheduleWhat(p.ScheduleID))
	}
	if sc.State.LastRunID != "" { // the last run's outcome as it is now
		if run, err := s.Store.GetRun(ctx, sc.State.LastRunID); err == nil {
			sc.State.LastOutcome = run.Status
		}
	}
	return schedulePayload(sc, s.now()), nil
}

func (s *Service) listSchedules(ctx context.Context, _ protocol.Empty) (protocol.ListSchedulesResult, error) {
	list, err := s.Store.ListSchedules(ctx)
	if err != nil {
		return protocol.ListSchedulesResult{}, storeErr(err, "schedules")
	}
	out := make([]protocol.Schedule, 0, len(list))
	for _, sc := range list {
		out = append(out, schedulePayload(sc, s.now()))
	}
	return protocol.ListSchedulesResult{Schedules: out, Total: len(out)}, nil
}

func (s *Service) deleteSchedule(ctx context.Context, p protocol.ScheduleIDParams) (protocol.DeleteScheduleResult, error) {
	deleted, err := s.Store.DeleteSchedule(ctx, p.ScheduleID)
	if err != nil {
		return protocol.DeleteScheduleResult{}, storeErr(err, scheduleWhat(p.ScheduleID))
	}
	if deleted {
		s.record(ctx, audit.Event{Kind: audit.ScheduleDeleted, Payload: protocol.Object{"schedule_id": p.ScheduleID}})
	}
	return protocol.DeleteScheduleResult{ID: p.ScheduleID, Deleted: deleted}, nil
}

// triggerSchedule fires a schedule now, under its overlap policy.
func (s *Service) triggerSchedule(ctx context.Context, p protocol.ScheduleIDParams) (protocol.ScheduleResult, error) {
	if s.Schedules == nil {
		return protocol.ScheduleResult{}, upstream("this server runs no scheduler")
	}
	sc, err := s.Schedules.Trigger(ctx, p.ScheduleID)
	if err != nil {
		return protocol.ScheduleResult{}, storeErr(err, scheduleWhat(p.ScheduleID))
	}
	return protocol.ScheduleResult{Schedule: schedulePayload(sc, s.now())}, nil
}

// schedulePayload shows sc with its next fire times after now (none
// while paused).
func schedulePayload(sc store.Schedule, now time.Time) protocol.Schedule {
	out := protocol.Schedule{ID: sc.ID, DeploymentID: sc.DeploymentID, WorkflowInput: sc.WorkflowInput,
		Spec: protocol.ScheduleSpec(sc.Spec), Overlap: sc.Overlap, CatchupWindowSeconds: sc.CatchupWindowSeconds,
		Paused: sc.Paused, Note: sc.Note, CreatedAtEpochMs: sc.CreatedAtMs, NextFireTimes: []int64{},
		Fired: sc.State.Fired, Missed: sc.State.Missed, Skipped: sc.State.Skipped}
	if out.WorkflowInput == nil {
		out.WorkflowInput = protocol.Object{}
	}
	if spec, err := schedules.Compile(sc.Spec); err == nil && !sc.Paused {
		from := time.UnixMilli(max(sc.State.LastTickMs, sc.ActiveSinceMs))
		if now.After(from) {
			from = now
		}
		for _, t := range spec.NextFires(sc.ID, from, nextFires) {
			out.NextFireTimes = append(out.NextFireTimes, t.UnixMilli())
		}
	}
	if sc.State.LastFireMs != 0 {
		out.LastFire = &protocol.ScheduleFire{AtEpochMs: sc.State.LastFireMs, RunID: sc.State.LastRunID, Outcome: sc.State.LastOutcome}
	}
	if sc.State.BufferedTickMs != 0 {
		out.BufferedTickEpochMs = ptr(sc.State.BufferedTickMs)
	}
	return out
}

func scheduleWhat(id string) string { return "schedule " + strconv.Quote(id) }
