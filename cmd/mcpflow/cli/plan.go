package cli

import (
	"encoding/json"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/workflow"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

// planOf decodes a compiled plan the server answered (the API carries it
// as the workflow language's JSON) to show its start, nodes and edges.
func planOf(raw p.Plan) (workflow.Plan, error) {
	var plan workflow.Plan
	if err := json.Unmarshal(raw, &plan); err != nil {
		return workflow.Plan{}, fmt.Errorf("the server's plan does not decode: %w", err)
	}
	return plan, nil
}
