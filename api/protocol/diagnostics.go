package protocol

// Diagnostic is one validation finding on a draft or plan, as the API
// reports it. Severity "warning" does not block; empty means an error.
type Diagnostic struct {
	Code       string  `json:"code"`
	Path       string  `json:"path"`
	Message    string  `json:"message"`
	StepID     *string `json:"step_id,omitempty"`
	RepairHint *string `json:"repair_hint,omitempty"`
	Severity   string  `json:"severity,omitempty"`
}

// CodeInfo says what one diagnostic code means and how to repair what it
// reports (what `mcpflow explain CODE` prints).
type CodeInfo struct {
	Code string `json:"code"`
	// Severity is "error" (it blocks) or "warning".
	Severity string `json:"severity"`
	Means    string `json:"means"`
	Repair   string `json:"repair"`
}

// SeverityWarning is the severity of a diagnostic that does not block.
const SeverityWarning = "warning"

// IsError reports whether d blocks compiling and running.
func (d Diagnostic) IsError() bool { return d.Severity != SeverityWarning }
