package contract_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/contract"
)

// runResult is a hand-built RunResult as the reference system returns it for a completed run.
type runResult struct {
	ArtifactID      string         `json:"artifact_id"`
	ArtifactVersion int            `json:"artifact_version"`
	DeploymentID    string         `json:"deployment_id"`
	Status          string         `json:"status,omitempty"`
	RunID           *string        `json:"run_id"`
	ResumeReadiness *string        `json:"resume_readiness"`
	Interrupt       map[string]any `json:"interrupt"`
	Outcome         *string        `json:"outcome"`
	Error           *string        `json:"error"`
	Output          map[string]any `json:"output"`
	Diagnostics     []any          `json:"diagnostics"`
	NextActions     nextActions    `json:"next_actions"`
	TraceCount      int            `json:"trace_count"`
}

type nextActions struct {
	CanContinue         bool     `json:"can_continue"`
	CanSaveNow          *bool    `json:"can_save_now"`
	RecommendedNextTool *string  `json:"recommended_next_tool"`
	Reason              string   `json:"reason"`
	PatchExamples       []any    `json:"patch_examples"`
	Warnings            []string `json:"warnings"`
}

func ptr[T any](v T) *T { return &v }

func completedRun() runResult {
	return runResult{
		ArtifactID: "counter", ArtifactVersion: 1, DeploymentID: "d1", Status: "completed",
		RunID: ptr("run-1"), Outcome: ptr("ok"), Output: map[string]any{"count": 1},
		Diagnostics: []any{}, TraceCount: 2,
		NextActions: nextActions{Reason: "run completed", PatchExamples: []any{}, Warnings: []string{}},
	}
}

func TestValidateResultAcceptsAReferenceRunResult(t *testing.T) {
	is := is.New(t)
	is.NoErr(contract.Default().ValidateResult("workflow.runs.start", completedRun()))
}

func TestValidateResultRejectsARunResultWithoutStatus(t *testing.T) {
	is := is.New(t)
	run := completedRun()
	run.Status = "" // omitted from the JSON
	err := contract.Default().ValidateResult("workflow.runs.start", run)
	is.True(err != nil)
	is.Equal(err.Error(), `result: missing required key "status"`)
}

func TestValidateResultDescendsIntoNestedResults(t *testing.T) {
	is := is.New(t)
	run := completedRun()
	run.NextActions.PatchExamples = []any{map[string]any{"description": "d", "tool": "t"}}
	err := contract.Default().ValidateResult("workflow.runs.inspect", run)
	is.Equal(err.Error(), `result.next_actions.patch_examples[0]: missing required key "request"`)

	err = contract.Default().ValidateResult("workflow.health", map[string]any{"status": "down", "store_root": "/tmp"})
	is.Equal(err.Error(), `result.status: must be "ok"`)
}

func TestValidateResultReportsUnencodableResults(t *testing.T) {
	is := is.New(t)
	err := contract.Default().ValidateResult("workflow.health", make(chan int))
	is.True(err != nil)
	_, isValidation := err.(*contract.ValidationError)
	is.True(!isValidation)
}
