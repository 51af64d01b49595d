package protocol

// The workflow.schedules methods (mcpflow extensions): schedules that
// start a deployment's runs (docs/triggers.md, "Schedules").
const (
	MethodSchedulesCreate  = "workflow.schedules.create"
	MethodSchedulesInspect = "workflow.schedules.inspect"
	MethodSchedulesList    = "workflow.schedules.list"
	MethodSchedulesUpdate  = "workflow.schedules.update"
	MethodSchedulesPause   = "workflow.schedules.pause"
	MethodSchedulesUnpause = "workflow.schedules.unpause"
	MethodSchedulesDelete  = "workflow.schedules.delete"
	MethodSchedulesTrigger = "workflow.schedules.trigger"
)

// ScheduleSpec is when a schedule fires: cron or interval_seconds.
type ScheduleSpec struct {
	Cron            string `json:"cron,omitempty"`
	IntervalSeconds int    `json:"interval_seconds,omitempty"`
	TimeZone        string `json:"time_zone,omitempty"`
	JitterSeconds   int    `json:"jitter_seconds,omitempty"`
}

// ScheduleDefinition is what workflow.schedules.create and update are
// given; an absent overlap is skip, an absent catch-up window 300 s.
type ScheduleDefinition struct {
	ID                   string       `json:"id"`
	DeploymentID         string       `json:"deployment_id"`
	WorkflowInput        Object       `json:"workflow_input,omitempty"`
	Spec                 ScheduleSpec `json:"spec"`
	Overlap              string       `json:"overlap,omitempty"`
	CatchupWindowSeconds *int         `json:"catchup_window_seconds,omitempty"`
	Paused               bool         `json:"paused,omitempty"`
}

// ScheduleParams are the params of workflow.schedules.create and update.
type ScheduleParams struct {
	Schedule ScheduleDefinition `json:"schedule"`
}

// ScheduleIDParams name a schedule.
type ScheduleIDParams struct {
	ScheduleID string `json:"schedule_id"`
}

// PauseScheduleParams are the params of pause and unpause.
type PauseScheduleParams struct {
	ScheduleID string `json:"schedule_id"`
	Note       string `json:"note,omitempty"`
}

// Schedule is the manifest's SchedulePayload: a schedule's definition
// and what its loop recorded.
type Schedule struct {
	ID                   string        `json:"id"`
	DeploymentID         string        `json:"deployment_id"`
	WorkflowInput        Object        `json:"workflow_input"`
	Spec                 ScheduleSpec  `json:"spec"`
	Overlap              string        `json:"overlap"`
	CatchupWindowSeconds int           `json:"catchup_window_seconds"`
	Paused               bool          `json:"paused"`
	Note                 string        `json:"note,omitempty"`
	CreatedAtEpochMs     int64         `json:"created_at_epoch_ms"`
	NextFireTimes        []int64       `json:"next_fire_times"`
	LastFire             *ScheduleFire `json:"last_fire"`
	Fired                int64         `json:"fired"`
	Missed               int64         `json:"missed"`
	Skipped              int64         `json:"skipped"`
	BufferedTickEpochMs  *int64        `json:"buffered_tick_epoch_ms,omitempty"`
}

// ScheduleFire is a schedule's last fire: when, the run it started and
// that run's status as last seen (or why no run started).
type ScheduleFire struct {
	AtEpochMs int64  `json:"at_epoch_ms"`
	RunID     string `json:"run_id,omitempty"`
	Outcome   string `json:"outcome"`
}

// ScheduleResult answers create, update, pause, unpause and trigger.
type ScheduleResult struct {
	Schedule Schedule `json:"schedule"`
}

// ListSchedulesResult answers workflow.schedules.list.
type ListSchedulesResult struct {
	Schedules []Schedule `json:"schedules"`
	Total     int        `json:"total"`
}

// DeleteScheduleResult answers workflow.schedules.delete.
type DeleteScheduleResult struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}
