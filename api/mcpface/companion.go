package mcpface

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	mfrpc "github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// The face's own tools.
const (
	toolGetRun       = "mcpflow_get_run"
	toolResumeRun    = "mcpflow_resume_run"
	toolCancelRun    = "mcpflow_cancel_run"
	toolFindWorkflow = "mcpflow_find_workflow"
	toolRunWorkflow  = "mcpflow_run_workflow"
)

// companion is one of the face's own tools; an authoring one is offered
// only where server.mcp.authoring is on.
type companion struct {
	toolEntry
	authoring bool
}

// runIDSchema is the input of the tools that name a run.
func runIDSchema(extra map[string]any, required ...string) map[string]any {
	props := map[string]any{"run_id": map[string]any{"type": "string", "description": "The run's id, as a workflow tool answered it."}}
	for k, v := range extra {
		props[k] = v
	}
	return map[string]any{"type": "object", "properties": props, "required": append([]any{"run_id"}, anys(required)...)}
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// companions are the run tools (get, resume, cancel, rerun, fork) and, for authors,
// the authoring tools.
func (f *Face) companions(s *served) []companion {
	no, yes := false, true
	tools := []companion{
		{toolEntry: toolEntry{
			tool: &mcp.Tool{Name: toolGetRun, Title: "Get a workflow run",
				Description: "Shows an mcpflow run as a workflow tool answers it (run_id, status, outcome, output, interrupt), also one whose call was cut off or that still runs.",
				InputSchema: runIDSchema(nil), OutputSchema: envelopeSchema,
				Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: &no, OpenWorldHint: &no}},
			handler: f.getRun(s), methods: getMethods}},
		{toolEntry: toolEntry{
			tool: &mcp.Tool{Name: toolResumeRun, Title: "Resume an interrupted workflow run",
				Description: "Answers the interrupt an mcpflow run waits in, with what the user said, and follows the run on to its end or its next interrupt. payload must match the interrupt's resume_schema; outcome is one of its outcomes (the first when absent).",
				InputSchema: runIDSchema(map[string]any{
					"payload": map[string]any{"type": "object", "description": "The answer, as the interrupt's resume_schema says."},
					"outcome": map[string]any{"type": "string", "description": "One of the interrupt's outcomes."},
				}), OutputSchema: envelopeSchema,
				Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &yes}},
			handler: f.resumeRun(s), methods: resumeMethods}},
		{toolEntry: toolEntry{
			tool: &mcp.Tool{Name: toolCancelRun, Title: "Cancel a workflow run",
				Description: "Ends a running or interrupted mcpflow run as cancelled; its calls in flight are cancelled upstream.",
				InputSchema: runIDSchema(map[string]any{"reason": map[string]any{"type": "string"}}), OutputSchema: envelopeSchema,
				Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: &yes, OpenWorldHint: &no}},
			handler: f.cancelRun(s), methods: cancelMethods}},
	}
	tools = append(tools, f.againTools(s)...)
	return append(tools, f.authoringTools(s)...)
}

func (f *Face) getRun(s *served) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in protocol.RunIDParams
		if bad := decodeArgs(req, &in); bad != nil {
			return bad, nil
		}
		var r protocol.RunResult
		if err := s.api.Call(ctx, protocol.MethodRunsInspect, in, &r); err != nil {
			return refusedOrError(err)
		}
		e := envelopeOf(r)
		if r.Status == "interrupted" {
			return result(e, interruptedNote(e)), nil
		}
		return result(e, ""), nil
	}
}

func (f *Face) resumeRun(s *served) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct {
			RunID   string          `json:"run_id"`
			Payload protocol.Object `json:"payload"`
			Outcome *string         `json:"outcome"`
		}
		if bad := decodeArgs(req, &in); bad != nil {
			return bad, nil
		}
		var r protocol.RunResult
		err := s.api.Call(ctx, protocol.MethodRunsResume, protocol.ResumeRunParams{RunID: in.RunID, ResumePayload: in.Payload, ResumeOutcome: in.Outcome}, &r)
		if err != nil {
			return refusedOrError(err)
		}
		if r.Status != "running" {
			return result(envelopeOf(r), ""), nil
		}
		return f.followRun(ctx, s, req, f.toolOfRun(s, r), in.RunID, 0)
	}
}

func (f *Face) cancelRun(s *served) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in protocol.CancelRunParams
		if bad := decodeArgs(req, &in); bad != nil {
			return bad, nil
		}
		var r protocol.RunResult
		if err := s.api.Call(ctx, protocol.MethodRunsCancel, in, &r); err != nil {
			return refusedOrError(err)
		}
		return result(envelopeOf(r), ""), nil
	}
}

// toolOfRun finds the workflow tool of a run's deployment; one the
// principal does not see is followed without a step total.
func (f *Face) toolOfRun(s *served, r protocol.RunResult) workflowTool {
	if t, err := f.lookup(s.who, r.DeploymentID); err == nil {
		return t
	}
	return workflowTool{deploymentID: r.DeploymentID}
}

// finderTools stand for many deployments: one finds them, one runs one.
func (f *Face) finderTools(s *served, vis []workflowTool) []toolEntry {
	yes, no := true, false
	return []toolEntry{
		{tool: &mcp.Tool{Name: toolFindWorkflow, Title: "Find a workflow",
			Description: "Lists the mcpflow workflows you may run whose name, title or description contains query (all without one): each with its name, title, description and input_schema, for mcpflow_run_workflow.",
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{"query": map[string]any{"type": "string"}}},
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: &no, OpenWorldHint: &no}},
			handler: f.findWorkflow(s), methods: findMethods},
		{tool: &mcp.Tool{Name: toolRunWorkflow, Title: "Run a workflow",
			Description: "Starts a run of the mcpflow workflow named (as mcpflow_find_workflow lists it) with input, and answers with the run's output, as the workflow's own tool does.",
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{
				"workflow": map[string]any{"type": "string", "description": "The workflow's name, or its deployment id."},
				"input":    map[string]any{"type": "object", "description": "The workflow's input, as its input_schema says."},
			}, "required": []any{"workflow"}},
			OutputSchema: envelopeSchema,
			Annotations:  &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &yes}},
			handler: f.runWorkflow(s), methods: workflowMethods},
	}
}

func (f *Face) findWorkflow(s *served) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct {
			Query string `json:"query"`
		}
		if bad := decodeArgs(req, &in); bad != nil {
			return bad, nil
		}
		type found struct {
			Name         string `json:"name"`
			DeploymentID string `json:"deployment_id"`
			Title        string `json:"title"`
			Description  string `json:"description"`
			InputSchema  any    `json:"input_schema"`
		}
		q := strings.ToLower(in.Query)
		f.mu.Lock()
		var out []found
		for _, t := range f.visible(s.who) {
			hay := strings.ToLower(t.tool.Name + " " + t.deploymentID + " " + t.tool.Title + " " + t.tool.Description)
			if strings.Contains(hay, q) {
				out = append(out, found{t.tool.Name, t.deploymentID, t.tool.Title, t.tool.Description, t.tool.InputSchema})
			}
		}
		f.mu.Unlock()
		list := map[string]any{"workflows": out}
		raw, err := json.Marshal(list)
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{textBlock(readable(list))}, StructuredContent: json.RawMessage(raw)}, nil
	}
}

func (f *Face) runWorkflow(s *served) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct {
			Workflow string          `json:"workflow"`
			Input    json.RawMessage `json:"input"`
		}
		if bad := decodeArgs(req, &in); bad != nil {
			return bad, nil
		}
		t, err := f.lookup(s.who, in.Workflow)
		if err != nil {
			return toolError("%v", err), nil
		}
		return f.startAndFollow(ctx, s, req, t, in.Input)
	}
}

// decodeArgs decodes a tool call's arguments into v; a tool error result
// when they do not decode.
func decodeArgs(req *mcp.CallToolRequest, v any) *mcp.CallToolResult {
	args := req.Params.Arguments
	if len(args) == 0 {
		args = []byte("{}")
	}
	if err := json.Unmarshal(args, v); err != nil {
		return toolError("the arguments do not decode: %v", err)
	}
	return nil
}

// refusedOrError is a workflow API failure as a tool result: what the
// model can act on (a bad run id, a refused resume: -32602 and 5000) is a
// tool error; a refusal of access or a failure of the server is a JSON-RPC
// error.
func refusedOrError(err error) (*mcp.CallToolResult, error) {
	var e *mfrpc.Error
	if errors.As(err, &e) && (e.Code == mfrpc.InvalidParams || e.Code == mfrpc.OperationFailed) {
		return toolError("%s", said(e)), nil
	}
	return nil, sdkError(err)
}

// sdkError carries a workflow API error to go-sdk as the JSON-RPC error
// the client gets: its code, its message with what it says beyond it (a
// refusal names the scope and the token), and its data; at HTTP 200, so
// that a client does not take a refusal of scope for a dead connection.
func sdkError(err error) error {
	var e *mfrpc.Error
	if !errors.As(err, &e) {
		return err
	}
	out := &jsonrpc.Error{Code: int64(e.Code), Message: e.Message}
	if d := e.Detail(); d != "" {
		out.Message += ": " + d
	}
	if e.Data != nil {
		out.Data, _ = json.Marshal(e.Data)
	}
	return out
}

// invalidParams is a refused request as -32602.
func invalidParams(err error) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprint(err)}
}
