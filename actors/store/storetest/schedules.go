package storetest

import (
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// schedule is a cron schedule with some state.
func schedule(id string) store.Schedule {
	return store.Schedule{
		ScheduleDef: store.ScheduleDef{
			ID: id, DeploymentID: "dep-" + id, WorkflowInput: workflow.Object{"n": float64(1)},
			Spec:    store.ScheduleSpec{Cron: "*/5 * * * * *", TimeZone: "Europe/Paris", JitterSeconds: 2},
			Overlap: "buffer_one", CatchupWindowSeconds: 600, CreatedAtMs: 1_800_000_000_000, ActiveSinceMs: 1_800_000_000_000,
		},
		State: store.ScheduleState{LastTickMs: 1_800_000_000_000},
	}
}

func testSchedules(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	list, err := s.ListSchedules(ctx)
	is.NoErr(err)
	is.Equal(len(list), 0)

	for _, id := range []string{"sched-b", "sched-a"} {
		is.NoErr(s.CreateSchedule(ctx, schedule(id)))
	}
	is.True(errors.Is(s.CreateSchedule(ctx, schedule("sched-a")), store.ErrExists))  // ids are unique
	is.True(errors.Is(s.CreateSchedule(ctx, schedule("bad id!")), store.ErrInvalid)) // ids are auth-like
	missing := schedule("sched-missing")
	is.True(errors.Is(s.UpdateSchedule(ctx, missing.ScheduleDef), store.ErrNotFound))
	is.True(errors.Is(s.SaveScheduleState(ctx, "sched-missing", missing.State), store.ErrNotFound))

	// The definition and the state are written apart: neither undoes the
	// other.
	def := schedule("sched-a").ScheduleDef
	def.Paused, def.Note = true, "maintenance"
	state := store.ScheduleState{LastTickMs: 1_800_000_060_000, LastFireMs: 1_800_000_060_500, LastRunID: "run-1",
		LastOutcome: "running", BufferedTickMs: 1_800_000_065_000, Fired: 3, Missed: 2, Skipped: 1}
	is.NoErr(s.SaveScheduleState(ctx, "sched-a", state))
	is.NoErr(s.UpdateSchedule(ctx, def))
	got, err := s.GetSchedule(ctx, "sched-a")
	is.NoErr(err)
	is.Equal(got, store.Schedule{ScheduleDef: def, State: state})

	list, err = s.ListSchedules(ctx)
	is.NoErr(err)
	is.Equal(len(list), 2)
	is.Equal(list[0].ID, "sched-a") // sorted by id
	is.Equal(list[1], schedule("sched-b"))

	deleted, err := s.DeleteSchedule(ctx, "sched-a")
	is.NoErr(err)
	is.True(deleted)
	deleted, err = s.DeleteSchedule(ctx, "sched-a")
	is.NoErr(err)
	is.True(!deleted)
	_, err = s.GetSchedule(ctx, "sched-a")
	is.True(errors.Is(err, store.ErrNotFound))
}
