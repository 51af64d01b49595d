package mcpface

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/api/protocol"
)

// The companion tools that start a run again after an earlier one.
const (
	toolRerunRun = "mcpflow_rerun_run"
	toolForkRun  = "mcpflow_fork_run"
)

// againMethods are what the rerun and fork tools call: their method,
// then the new run followed as a workflow tool follows its own.
func againMethods(method string) []string {
	return []string{method, protocol.MethodRunsSubscribe, protocol.MethodRunsInspect, protocol.MethodRunsCancel}
}

// againTools are mcpflow_rerun_run and mcpflow_fork_run.
func (f *Face) againTools(s *served) []companion {
	yes := true
	return []companion{
		{toolEntry: toolEntry{
			tool: &mcp.Tool{Name: toolRerunRun, Title: "Run a workflow run again",
				Description: "Starts a new run of the workflow an mcpflow run ran, with the same input, on the same workflow version (or a newer artifact_version), and follows it to its end. The new run names the run as its parent_run_id.",
				InputSchema: runIDSchema(map[string]any{
					"artifact_version": map[string]any{"type": "integer", "minimum": 1, "description": "A newer version of the run's workflow to run; the run's own when absent."},
				}), OutputSchema: envelopeSchema,
				Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &yes}},
			handler: f.runAgain(s, protocol.MethodRunsRerun, func(in againArgs) any {
				return protocol.RerunRunParams{RunID: in.RunID, ArtifactVersion: in.ArtifactVersion, Wait: new(false)}
			}), methods: againMethods(protocol.MethodRunsRerun)}},
		{toolEntry: toolEntry{
			tool: &mcp.Tool{Name: toolForkRun, Title: "Fork a workflow run from a step",
				Description: "Starts a new run of the workflow an mcpflow run ran, with the same input, that reuses the run's recorded results of the steps before from_node without calling their tools again, and executes from from_node on (after fixing what made that step fail, say); follows it to its end. from_node is a step the run reached on its main line; a refusal lists the valid ones.",
				InputSchema: runIDSchema(map[string]any{
					"from_node": map[string]any{"type": "string", "description": "The step to execute from, as the run's trace names it."},
				}, "from_node"), OutputSchema: envelopeSchema,
				Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &yes}},
			handler: f.runAgain(s, protocol.MethodRunsFork, func(in againArgs) any {
				return protocol.ForkRunParams{RunID: in.RunID, FromNode: in.FromNode, Wait: new(false)}
			}), methods: againMethods(protocol.MethodRunsFork)}},
	}
}

// againArgs are the arguments of the rerun and fork tools.
type againArgs struct {
	RunID           string `json:"run_id"`
	ArtifactVersion *int   `json:"artifact_version"`
	FromNode        string `json:"from_node"`
}

// runAgain calls method with the params of the tool's arguments, and
// follows the new run as a workflow tool follows its own.
func (f *Face) runAgain(s *served, method string, params func(againArgs) any) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in againArgs
		if bad := decodeArgs(req, &in); bad != nil {
			return bad, nil
		}
		var r protocol.RunResult
		if err := s.api.Call(ctx, method, params(in), &r); err != nil {
			return refusedOrError(err)
		}
		if r.RunID == nil { // unrunnable: the deployment's dependencies are broken
			return toolError("the workflow cannot run now: %s", r.NextActions.Reason), nil
		}
		return f.followRun(ctx, s, req, f.toolOfRun(s, r), *r.RunID, 0)
	}
}
