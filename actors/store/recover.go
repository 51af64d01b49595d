package store

import (
	"fmt"
	"time"
)

// resumeNotApplicable is the resume readiness of a run that cannot resume.
const resumeNotApplicable = "not_applicable"

// RecoveredRun returns r as RecoverRunning leaves a run that a crash cut off:
// failed, not resumable, updated at now, with an error naming the step that
// was in flight. Implementations of Store call it so that they agree.
func RecoveredRun(r Run, now time.Time) Run {
	msg := "mcpflow stopped while this run was running, before it had started a step"
	if r.CurrentStep != "" {
		msg = fmt.Sprintf("mcpflow stopped while this run was executing step %q; the outcome of that step is unknown", r.CurrentStep)
	}
	r.Status = RunFailed
	r.ResumeReadiness = resumeNotApplicable
	r.UpdatedAt = now.UTC().Round(0) // Round(0) drops the monotonic reading
	r.Error = &msg
	return r
}
