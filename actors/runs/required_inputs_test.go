package runs

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// TestUnboundRequiredFindsAStepThatLeavesARequiredFieldUnbound is the
// deployment side of issue 29's first validation mistake: the tool now
// requires key, and the artifact's step binds only value.
func TestUnboundRequiredFindsAStepThatLeavesARequiredFieldUnbound(t *testing.T) {
	is := is.New(t)
	plan := workflow.Plan{Nodes: []workflow.Node{
		{ID: "set", Type: workflow.NodeCall, Node: "kv.default.set", Input: []workflow.InputBinding{workflow.PathBinding("value", "input.v")}},
		{ID: "other", Type: workflow.NodeCall, Node: "kv.default.get"},
	}}
	schema := workflow.Object{"type": "object", "required": []any{"key", "value"}}
	diags := unboundRequired(plan, "kv.default.set", "kv.prod", schema)
	is.Equal(len(diags), 1)
	is.Equal(diags[0].Code, "required_input_unbound")
	is.Equal(*diags[0].BoundSource, "kv.prod")
	is.Equal(diags[0].Message, `step "set" does not fill "key", which kv.default.set requires now: its runs would fail at that call`)
	is.Equal(len(unboundRequired(plan, "kv.default.set", "kv.prod", workflow.Object{"type": "object"})), 0) // nothing required
}
