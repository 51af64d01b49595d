package protocol

// Methods that start a run again (extensions to the reference contract,
// issue 31).
const (
	// MethodRunsRerun starts a new run of a run's deployment on its input.
	MethodRunsRerun = "workflow.runs.rerun"
	// MethodRunsFork starts a new run that replays a run's recorded
	// results up to a step and executes from there.
	MethodRunsFork = "workflow.runs.fork"
)

// RerunRunParams are the params of workflow.runs.rerun.
type RerunRunParams struct {
	RunID string `json:"run_id"`
	// ArtifactVersion is the version of the run's artifact to run: the
	// run's own when absent, else that one or a newer one.
	ArtifactVersion *int        `json:"artifact_version,omitempty"`
	TraceRange      *TraceRange `json:"trace_range,omitempty"`
	// Wait is as StartRunParams'.
	Wait *bool `json:"wait,omitempty"`
}

// ForkRunParams are the params of workflow.runs.fork.
type ForkRunParams struct {
	RunID string `json:"run_id"`
	// FromNode is the step the new run executes from: a step of the
	// workflow's main line the run reached.
	FromNode   string      `json:"from_node"`
	TraceRange *TraceRange `json:"trace_range,omitempty"`
	// Wait is as StartRunParams'.
	Wait *bool `json:"wait,omitempty"`
}
