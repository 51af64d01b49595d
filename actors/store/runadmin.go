package store

import "fmt"

// Admin event kinds a run's commits append (the reference system's names).
const (
	EventRunStarted   = "workflow_run_started"
	EventRunResumed   = "workflow_run_resumed"
	EventRunCompleted = "workflow_run_completed"
	EventRunFailed    = "workflow_run_failed"
)

// RunAdminEvents returns the admin events of one commit that takes a run
// from prev (nil when the commit creates it) to next:
// workflow_run_started when it is created, workflow_run_resumed when it
// leaves an interrupt other than to be cancelled, and
// workflow_run_completed or workflow_run_failed (a cancelled run too, its
// payload says so) when it ends. A pause records nothing.
//
// Implementations of Store write them in the transaction of the commit,
// so that they stand or fall with it: memory and SQLite append them
// there; PostgreSQL queues them there and numbers them once the commit
// is durable, so that concurrent commits do not wait on one counter. The
// payload
// never holds the run's error text, which may quote an upstream;
// workflow.runs.inspect shows it.
func RunAdminEvents(prev *Run, next Run) []Event {
	if ret := next.Deployment.Retention; ret != nil && ret.Transient {
		return nil // not recorded
	}
	var kinds []string
	switch {
	case prev == nil:
		kinds = append(kinds, EventRunStarted)
	case prev.Status == RunInterrupted && next.Status != RunInterrupted && next.Status != RunCancelled:
		kinds = append(kinds, EventRunResumed)
	}
	if Terminal(next.Status) && (prev == nil || !Terminal(prev.Status)) {
		if next.Status == RunCompleted {
			kinds = append(kinds, EventRunCompleted)
		} else {
			kinds = append(kinds, EventRunFailed)
		}
	}
	events := make([]Event, 0, len(kinds))
	for _, kind := range kinds {
		events = append(events, RunAdminEvent(kind, next))
	}
	return events
}

// RunAdminEvent is the admin event kind records about run r, stamped with
// r's last update.
func RunAdminEvent(kind string, r Run) Event {
	payload := map[string]any{
		"run_id": r.ID, "deployment_id": r.DeploymentID, "artifact_id": r.ArtifactID, "artifact_version": r.ArtifactVersion,
		"status": r.Status, "trace_count": r.TraceCount,
	}
	if r.Outcome != nil {
		payload["outcome"] = *r.Outcome
	}
	capability, name := fmt.Sprintf("workflow.%s.v%d", r.ArtifactID, r.ArtifactVersion), r.ArtifactID
	return Event{Kind: kind, TimestampEpochMs: r.UpdatedAt.UnixMilli(), CapabilityID: &capability, WorkflowName: &name, Payload: payload}
}
