package config

import "errors"

// Server-wide bounds on what one run or one upstream answer may cost
// (docs/operations.md, "Limits").
const (
	// DefaultMaxSteps is the ceiling on a run's step budget: a
	// deployment's limits.max_steps above it is refused at save.
	DefaultMaxSteps = 100_000
	// DefaultMaxResultBytes bounds one upstream answer (a tool result or
	// a resource read) of a source that sets no max_result_bytes.
	DefaultMaxResultBytes = 16 << 20
)

// Limits bounds runs and upstream answers server-wide. Every field is
// optional: an absent or zero one keeps the default.
type Limits struct {
	// MaxSteps is the ceiling on any run's step budget: a deployment may
	// ask for fewer steps, never more. Absent: DefaultMaxSteps.
	MaxSteps int `json:"max_steps,omitempty"`
	// MaxResultBytes bounds one upstream answer, for every source that
	// sets no max_result_bytes of its own. Absent: DefaultMaxResultBytes.
	MaxResultBytes int64 `json:"max_result_bytes,omitempty"`
	// StepProgressIntervalMs is the interval within which a run stores at
	// most one step_progress per call, the latest. Absent: 500.
	StepProgressIntervalMs int `json:"step_progress_interval_ms,omitempty"`
	// MaxStepLogs caps the step_log events of one step; past it one more
	// says how many were dropped. Absent: 100.
	MaxStepLogs int `json:"max_step_logs,omitempty"`
}

// Validate checks the values a limits block sets: none may be negative.
func (l *Limits) Validate() error {
	if l == nil {
		return nil
	}
	var errs []error
	if l.MaxSteps < 0 {
		errs = append(errs, errors.New("limits: max_steps must not be negative"))
	}
	if l.MaxResultBytes < 0 {
		errs = append(errs, errors.New("limits: max_result_bytes must not be negative"))
	}
	if l.StepProgressIntervalMs < 0 {
		errs = append(errs, errors.New("limits: step_progress_interval_ms must not be negative"))
	}
	if l.MaxStepLogs < 0 {
		errs = append(errs, errors.New("limits: max_step_logs must not be negative"))
	}
	return errors.Join(errs...)
}

// StepCeiling is the most steps any run may take: MaxSteps, or
// DefaultMaxSteps unless set.
func (l *Limits) StepCeiling() int {
	if l == nil || l.MaxSteps == 0 {
		return DefaultMaxSteps
	}
	return l.MaxSteps
}

// ResultBytes is the server-wide bound on one upstream answer:
// MaxResultBytes, or DefaultMaxResultBytes unless set.
func (l *Limits) ResultBytes() int64 {
	if l == nil || l.MaxResultBytes == 0 {
		return DefaultMaxResultBytes
	}
	return l.MaxResultBytes
}
