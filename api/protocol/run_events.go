package protocol

import "encoding/json"

// RunEvent is one event of a run as a client following it sees it
// (workflow.runs.event): what one commit of the run changed, numbered per
// run from 1 without gaps.
type RunEvent struct {
	RunID            string `json:"run_id"`
	Seq              int64  `json:"sequence"`
	Kind             string `json:"kind"`
	TimestampEpochMs int64  `json:"timestamp_epoch_ms"`
	// Step is set for step_started, step_finished, step_progress and
	// step_log.
	Step *RunEventStep `json:"step,omitempty"`
	// Interrupt is set for interrupted.
	Interrupt *Interrupt `json:"interrupt,omitempty"`
	// Status is set for status.
	Status *RunEventStatus `json:"status,omitempty"`
	// Progress is set for step_progress.
	Progress *RunEventProgress `json:"progress,omitempty"`
	// Log is set for step_log.
	Log *RunEventLog `json:"log,omitempty"`
	// Session is set for session_replaced (an extension).
	Session *RunEventSession `json:"session,omitempty"`
}

// RunEventProgress is the notifications/progress of a step's call that a
// step_progress event reports; Total is nil when the upstream did not say.
type RunEventProgress struct {
	Progress float64  `json:"progress"`
	Total    *float64 `json:"total,omitempty"`
	Message  string   `json:"message,omitempty"`
}

// RunEventLog is the notifications/message of a step's call that a
// step_log event reports: Data is bounded (Truncated when cut); Dropped
// counts, on the event that ends a step's capped logs, those not kept.
type RunEventLog struct {
	Level     string          `json:"level"`
	Logger    string          `json:"logger,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	Truncated bool            `json:"truncated,omitempty"`
	Dropped   int             `json:"dropped,omitempty"`
}

// RunEventSession is the replacement a session_replaced event tells of:
// the run's calls on Connection (in Scope, "" for the shared session)
// went to OldGeneration's session, and now go to NewGeneration's, whose
// server kept nothing of the old one. Restarted: the new session was
// opened by a later mcpflow process.
type RunEventSession struct {
	Connection    string `json:"connection"`
	Scope         string `json:"scope,omitempty"`
	OldGeneration int64  `json:"old_generation"`
	NewGeneration int64  `json:"new_generation"`
	Restarted     bool   `json:"restarted,omitempty"`
}

// RunEventStep is the step of a step_started or step_finished event.
type RunEventStep struct {
	FrameID string `json:"frame_id"`
	NodeID  string `json:"node_id"`
	// CallID and Capability name the call of a step_started.
	CallID     string `json:"call_id,omitempty"`
	Capability string `json:"capability,omitempty"`
	// The rest describe a step_finished: where its trace entry is, how it
	// ended, and the state paths it changed (sorted), not their values.
	TraceIndex   *int     `json:"trace_index,omitempty"`
	StepType     string   `json:"step_type,omitempty"`
	Outcome      string   `json:"outcome,omitempty"`
	NextNodeID   string   `json:"next_node_id,omitempty"`
	StateChanges []string `json:"state_changes,omitempty"`
	Attempts     int      `json:"attempts,omitempty"`
	Error        string   `json:"error,omitempty"`
}

// RunEventStatus is the status of a status event. Terminal is set when
// the run has ended (completed, failed or cancelled): no event follows.
type RunEventStatus struct {
	Status     string  `json:"status"`
	Terminal   bool    `json:"terminal"`
	Outcome    *string `json:"outcome,omitempty"`
	Error      *string `json:"error,omitempty"`
	Output     Object  `json:"output,omitempty"`
	TraceCount int     `json:"trace_count"`
}

// Interrupt is where a run paused, waiting for a resume.
type Interrupt struct {
	ID            string          `json:"id"`
	FrameID       string          `json:"frame_id"`
	NodeID        string          `json:"node_id"`
	Kind          string          `json:"kind"`
	Payload       Object          `json:"payload"`
	Resumable     bool            `json:"resumable"`
	Route         *InterruptRoute `json:"route"`
	Outcomes      []string        `json:"outcomes"`
	RequestSchema Object          `json:"request_schema"`
	ResumeSchema  Object          `json:"resume_schema"`
	Typed         bool            `json:"typed"`
}

// InterruptRoute locates an interrupt inside a child workflow.
type InterruptRoute struct {
	FrameID       string      `json:"frame_id"`
	NodeID        string      `json:"node_id"`
	ScopeID       string      `json:"scope_id"`
	LineageID     string      `json:"lineage_id"`
	ParentFrameID string      `json:"parent_frame_id"`
	WorkflowRef   WorkflowRef `json:"workflow_ref"`
}

// WorkflowRef names a child workflow: a saved artifact by id and version,
// or a local name.
type WorkflowRef struct {
	ArtifactID *string `json:"artifact_id,omitempty"`
	Version    *int    `json:"version,omitempty"`
	Name       *string `json:"name,omitempty"`
}
