package workflow_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// runBounded runs a one-step draft of wf.std.constant handing on value,
// with the bound on a built-in's output at limit bytes.
func runBounded(t *testing.T, value any, limit int64) *workflow.Execution {
	t.Helper()
	opts := strict
	opts.MaxOutputBytes = limit
	e, err := workflow.NewExecution(workflow.Program{Root: planOf(t, specDraft(t, "wf.std.constant", workflow.Object{"value": value}))}, nil, opts)
	is.New(t).NoErr(err)
	e.Advance()
	return e
}

func TestABuiltinStepWhoseOutputPassesTheBoundFailsAsTooLarge(t *testing.T) {
	is := is.New(t)
	// {"value":"xxx…"} is 12 bytes more than its text.
	is.Equal(runBounded(t, strings.Repeat("x", 1000), 1012).Status(), workflow.StatusCompleted) // at the bound
	e := runBounded(t, strings.Repeat("x", 1001), 1012)
	errHas(t, e, `step "s": result_too_large: the output of wf.std.constant is larger than 1012 bytes (server.limits.max_result_bytes)`)

	nested := []any{workflow.Object{"a": []any{1.5, true, nil, "é"}}}
	e = runBounded(t, nested, int64(len(`{"value":[{"a":[1.5,true,null,"é"]}]}`))-1)
	errHas(t, e, "result_too_large") // every kind of value counts
	is.Equal(runBounded(t, nested, int64(len(`{"value":[{"a":[1.5,true,null,"é"]}]}`))).Status(), workflow.StatusCompleted)
}
