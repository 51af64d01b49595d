package contract_test

import (
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/contract"
)

// The notifications pushed to subscriptions have params schemas in the
// manifest, and the OpenRPC document lists them.
func TestNotificationsAreDescribed(t *testing.T) {
	is := is.New(t)
	c := contract.Default()
	event := map[string]any{"subscription_id": "sub_1", "run_id": "run_1", "sequence": 3, "kind": "step_finished",
		"timestamp_epoch_ms": 1, "step": map[string]any{"frame_id": "root", "node_id": "call", "trace_index": 0,
			"step_type": "node", "outcome": "ok", "next_node_id": "__end__", "state_changes": []any{"state.count"}}}
	is.NoErr(c.ValidateNotification("workflow.runs.event", event))
	status := map[string]any{"subscription_id": "sub_1", "run_id": "run_1", "sequence": 4, "kind": "status", "timestamp_epoch_ms": 1,
		"status": map[string]any{"status": "completed", "terminal": true, "outcome": "ok", "output": map[string]any{"count": 1}, "trace_count": 1}}
	is.NoErr(c.ValidateNotification("workflow.runs.event", status))
	is.NoErr(c.ValidateNotification("workflow.runs.lagged", map[string]any{"subscription_id": "sub_1", "run_id": "run_1", "cursor": 2, "reason": "buffer_full"}))
	is.NoErr(c.ValidateNotification("workflow.admin.event", map[string]any{"subscription_id": "sub_2", "sequence": 9, "kind": "tools_changed",
		"timestamp_epoch_ms": 1, "connection_id": "demo.default", "capability_id": nil, "workflow_name": nil, "payload": map[string]any{}}))

	delete(event, "sequence")
	_, isValidation := errors.AsType[*contract.ValidationError](c.ValidateNotification("workflow.runs.event", event))
	is.True(isValidation) // a missing sequence breaks the schema
	is.True(errors.Is(c.ValidateNotification("workflow.runs.nope", nil), contract.ErrUnknownMethod))

	doc, err := contract.OpenRPC(c.Methods(), contract.Info{Title: "mcpflow", Version: "test"})
	is.NoErr(err)
	listed := doc[contract.NotificationsKey].([]any)
	is.Equal(len(listed), len(c.Notifications())) // rpc.discover lists the notifications
	is.Equal(listed[0].(map[string]any)["name"], "workflow.runs.event")
}
