package mcpface

import (
	"encoding/json"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// taskRunOf is a run record as workflow.runs.inspect answers it.
func taskRunOf(status string) protocol.RunResult {
	id := "run_1"
	return protocol.RunResult{RunID: &id, DeploymentID: "d.default", Status: status, TraceCount: 3,
		CreatedAt: "2026-12-07T13:00:00Z", UpdatedAt: "2026-12-07T13:00:01Z"}
}

func TestARunsStatusIsItsTasks(t *testing.T) {
	is := is.New(t)
	f := New(Options{})
	s := &served{who: access.Anonymous}

	working := f.taskOf(s, taskRunOf("running"), true)
	is.Equal(working.Status, "working")
	is.Equal(working.TaskID, "run_1") // the run id
	is.Equal(working.CreatedAt, "2026-12-07T13:00:00Z")
	is.Equal(working.LastUpdatedAt, "2026-12-07T13:00:01Z")
	is.Equal(working.TTLMs, (*int64)(nil))
	is.Equal(working.Result, map[string]any(nil))

	failed := taskRunOf("failed")
	why := "the upstream refused"
	failed.Error = &why
	got := f.taskOf(s, failed, true)
	is.Equal(got.Status, "completed") // a tool error, not a JSON-RPC one
	is.Equal(got.Result["isError"], true)
	is.Equal(got.Result["resultType"], "complete")
	created := f.taskOf(s, failed, false)
	is.Equal(created.Result, map[string]any(nil)) // a CreateTaskResult inlines nothing

	cancelled := f.taskOf(s, taskRunOf("cancelled"), true)
	is.Equal(cancelled.Status, "cancelled")
}

func TestAnInterruptIsAnInputRequestKeyedForTheTasksLife(t *testing.T) {
	is := is.New(t)
	f := New(Options{})
	s := &served{who: access.Anonymous}

	form := taskRunOf("interrupted")
	form.Interrupt = protocol.Object{"id": "interrupt:ask", "node_id": "ask", "kind": "approval", "outcomes": []any{"submitted"},
		"payload":       map[string]any{"message": "Approve?"},
		"resume_schema": map[string]any{"type": "object", "properties": map[string]any{"approved": map[string]any{"type": "boolean"}}}}
	got := f.taskOf(s, form, true)
	is.Equal(got.Status, "input_required")
	var requests map[string]struct {
		Method string         `json:"method"`
		Params map[string]any `json:"params"`
	}
	is.NoErr(json.Unmarshal(got.InputRequests, &requests))
	is.Equal(len(requests), 1)
	is.Equal(requests["interrupt:ask#3"].Method, "elicitation/create") // the interrupt at the run's trace count
	is.Equal(requests["interrupt:ask#3"].Params["message"], "Approve?")

	nested := taskRunOf("interrupted")
	nested.Interrupt = protocol.Object{"id": "interrupt:ask", "node_id": "ask", "kind": "approval",
		"resume_schema": map[string]any{"type": "object", "properties": map[string]any{"items": map[string]any{"type": "array"}}}}
	got = f.taskOf(s, nested, true)
	is.Equal(got.Status, "input_required")
	is.Equal(string(got.InputRequests), "{}") // no form to ask: the model resumes it
	is.True(len(got.StatusMessage) > 0)
}
