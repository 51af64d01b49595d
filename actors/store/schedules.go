package store

import (
	"context"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// ScheduleDef is what a schedule's owner sets (create, update, pause): a
// deployment started with a fixed input on a cron or interval spec.
type ScheduleDef struct {
	ID                   string          `json:"id"`
	DeploymentID         string          `json:"deployment_id"`
	WorkflowInput        workflow.Object `json:"workflow_input"`
	Spec                 ScheduleSpec    `json:"spec"`
	Overlap              string          `json:"overlap"` // skip | buffer_one | allow_all | cancel_other
	CatchupWindowSeconds int             `json:"catchup_window_seconds"`
	Paused               bool            `json:"paused"`
	Note                 string          `json:"note,omitempty"` // the last pause's or unpause's note
	CreatedAtMs          int64           `json:"created_at_epoch_ms"`
	// ActiveSinceMs is when the schedule last became active (created,
	// updated or unpaused): no tick at or before it is fired, missed or
	// skipped.
	ActiveSinceMs int64 `json:"active_since_epoch_ms"`
}

// ScheduleSpec is when a schedule fires: Cron (seconds optional, CRON_TZ
// allowed) or IntervalSeconds, in TimeZone, each fire delayed by up to
// JitterSeconds.
type ScheduleSpec struct {
	Cron            string `json:"cron,omitempty"`
	IntervalSeconds int    `json:"interval_seconds,omitempty"`
	TimeZone        string `json:"time_zone,omitempty"`
	JitterSeconds   int    `json:"jitter_seconds,omitempty"`
}

// ScheduleState is what the scheduling loop records of a schedule.
type ScheduleState struct {
	// LastTickMs is the last tick the loop dealt with (fired, skipped or
	// missed); ticks after it are still to come.
	LastTickMs  int64  `json:"last_tick_epoch_ms,omitempty"`
	LastFireMs  int64  `json:"last_fire_epoch_ms,omitempty"`
	LastRunID   string `json:"last_run_id,omitempty"`
	LastOutcome string `json:"last_outcome,omitempty"` // the last run's status, as last seen
	// BufferedTickMs is a tick buffer_one holds until the last run ends.
	BufferedTickMs int64 `json:"buffered_tick_epoch_ms,omitempty"`
	Fired          int64 `json:"fired,omitempty"`
	Missed         int64 `json:"missed,omitempty"`
	Skipped        int64 `json:"skipped,omitempty"`
}

// Schedule is a schedule's definition with its state.
type Schedule struct {
	ScheduleDef
	State ScheduleState `json:"state"`
}

// Schedules keeps schedules. The definition and the state are written
// apart, so that an owner's update and the loop's record of a fire never
// overwrite each other.
type Schedules interface {
	// CreateSchedule stores a new schedule with its state; ErrExists if
	// the id is taken, ErrInvalid unless ValidAuthID(s.ID).
	CreateSchedule(ctx context.Context, s Schedule) error
	// UpdateSchedule replaces a schedule's definition and keeps its
	// state; ErrNotFound if there is none.
	UpdateSchedule(ctx context.Context, def ScheduleDef) error
	// SaveScheduleState replaces a schedule's state; ErrNotFound if
	// there is none.
	SaveScheduleState(ctx context.Context, id string, st ScheduleState) error
	// GetSchedule returns a schedule or ErrNotFound.
	GetSchedule(ctx context.Context, id string) (Schedule, error)
	// ListSchedules returns every schedule sorted by id.
	ListSchedules(ctx context.Context) ([]Schedule, error)
	// DeleteSchedule removes a schedule; false if it did not exist.
	DeleteSchedule(ctx context.Context, id string) (bool, error)
}
