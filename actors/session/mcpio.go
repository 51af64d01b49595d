package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/tracing"
)

// closeSession closes cs gracefully, or kills the transport's peer when the
// close does not finish within timeout; then it ends the session's
// transport context (end, if not nil) and closes the idle connections of
// the session's own HTTP pool.
func closeSession(cs *mcp.ClientSession, t mcp.Transport, end context.CancelFunc, timeout time.Duration) {
	if end != nil {
		defer end()
	}
	done := make(chan struct{})
	go func() {
		_ = cs.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(timeout):
		if k, ok := t.(Killer); ok {
			_ = k.Kill()
		}
		<-done
	}
	closeIdle(t)
}

// emptyArguments are the arguments of a call that has none.
var emptyArguments = json.RawMessage("{}")

// callTool performs one call, with token as its progressToken, and
// projects its result (see projectOutput).
// err is how the call failed, for its answer; rpcErr is the request's own
// error, for classify: a result that cannot be projected fails the call
// with rpcErr nil.
//
// A retry (call.Input) carries its input responses and requestState; an
// input_required result is answered as OutcomeInputRequired, its
// requests in Input, as policy answers them (mrtr.go).
func callTool(ctx context.Context, cs *mcp.ClientSession, call CallTool, token string, policy inputPolicy) (r ToolResult, err, rpcErr error) {
	args := call.Arguments
	if len(args) == 0 {
		args = emptyArguments
	}
	params := &mcp.CallToolParams{Name: call.Tool, Arguments: args, Meta: tracing.Meta(call.TraceParent, call.TraceState)}
	params.SetProgressToken(token)
	if err := setRetry(params, call.Input); err != nil {
		return ToolResult{}, fmt.Errorf("call %s.%s: %w", call.Connection, call.Tool, err), nil
	}
	res, rpcErr := cs.CallTool(ctx, params)
	if rpcErr != nil {
		err, rpcErr = answerTooLarge(rpcErr, call.Connection)
		return ToolResult{}, fmt.Errorf("call %s.%s: %w", call.Connection, call.Tool, err), rpcErr
	}
	if needsInput(res) {
		in, err := policy.inputRequired(res)
		if err != nil {
			return ToolResult{}, fmt.Errorf("call %s.%s: %w", call.Connection, call.Tool, err), nil
		}
		return ToolResult{Outcome: OutcomeInputRequired, Input: in}, nil, nil
	}
	outcome := "ok"
	if res.IsError {
		outcome = "error"
	}
	output, content, err := projectOutput(res)
	if err != nil {
		return ToolResult{}, fmt.Errorf("call %s.%s: %w", call.Connection, call.Tool, err), nil
	}
	return ToolResult{Outcome: outcome, Output: output, Content: content}, nil, nil
}

// readResource reads one resource on an open session; its output is the
// ReadResourceResult. err and rpcErr as for callTool.
func readResource(ctx context.Context, cs *mcp.ClientSession, req ReadResource, token string) (r ToolResult, err, rpcErr error) {
	params := &mcp.ReadResourceParams{URI: req.URI, Meta: tracing.Meta(req.TraceParent, req.TraceState)}
	params.SetProgressToken(token)
	res, rpcErr := cs.ReadResource(ctx, params)
	err = rpcErr
	switch {
	case rpcErr != nil:
		err, rpcErr = answerTooLarge(rpcErr, req.Connection)
	case res.NeedsInput() || res.InputRequests != nil:
		err = errors.New("the server answered input_required, which mcpflow answers for tools/call only")
	default:
		var out map[string]any
		if out, err = toObject(res); err == nil {
			return ToolResult{Outcome: "ok", Output: out}, nil, nil
		}
	}
	return ToolResult{}, fmt.Errorf("read %s of %s: %w", req.URI, req.Connection, err), rpcErr
}

// getPrompt renders one prompt on an open session; its output is the
// GetPromptResult. err and rpcErr as for callTool.
func getPrompt(ctx context.Context, cs *mcp.ClientSession, req GetPrompt, token string) (ToolResult, error, error) {
	params := &mcp.GetPromptParams{Name: req.Name, Arguments: req.Arguments}
	params.SetProgressToken(token)
	res, rpcErr := cs.GetPrompt(ctx, params)
	return answered(res, rpcErr, req.Connection, "get prompt "+req.Name)
}

// complete completes one argument on an open session; its output is the
// CompleteResult. An upstream that did not declare the completions
// capability is not asked: the output has no values. err and rpcErr as
// for callTool.
func complete(ctx context.Context, cs *mcp.ClientSession, req Complete) (ToolResult, error, error) {
	if init := cs.InitializeResult(); init == nil || init.Capabilities == nil || init.Capabilities.Completions == nil {
		return ToolResult{Outcome: "ok", Output: map[string]any{"completion": map[string]any{"values": []any{}}}}, nil, nil
	}
	params := &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: req.RefType, Name: req.RefName, URI: req.RefURI},
		Argument: mcp.CompleteParamsArgument{Name: req.Argument, Value: req.Value}}
	if len(req.Context) > 0 {
		params.Context = &mcp.CompleteContext{Arguments: req.Context}
	}
	res, rpcErr := cs.Complete(ctx, params)
	return answered(res, rpcErr, req.Connection, "complete "+req.Argument)
}

// answered is the ToolResult of a request (what, on connection) whose
// answer is res, the whole result as the output, or rpcErr. err and
// rpcErr as for callTool.
func answered(res any, rpcErr error, connection, what string) (ToolResult, error, error) {
	err := rpcErr
	if rpcErr != nil {
		err, rpcErr = answerTooLarge(rpcErr, connection)
	} else {
		var out map[string]any
		if out, err = toObject(res); err == nil {
			return ToolResult{Outcome: "ok", Output: out}, nil, nil
		}
	}
	return ToolResult{}, fmt.Errorf("%s of %s: %w", what, connection, err), rpcErr
}

// projectOutput returns a tool's result as the call's output, and the
// content blocks that output does not hold. Content blocks keep their MCP
// type (text, image, audio, resource_link, resource), as go-sdk decoded
// them into its own types and turned back into JSON values here.
//
//   - A successful result with an object as structuredContent: the output
//     is the structured content, as go-sdk decoded it (never encoded again
//     on its way to the run's state and the store). Its content blocks are
//     returned beside it, except a text block that is the structured
//     content's own JSON (MCP's backward-compatible copy): an image beside
//     a structured output is kept, in the step's trace entry.
//   - Any other result: {"content": [...]}, and for an error result with
//     structured content, "structuredContent" beside it (an error's output
//     is never checked against the tool's output schema).
func projectOutput(res *mcp.CallToolResult) (output map[string]any, content []any, err error) {
	blocks := res.Content
	if blocks == nil {
		blocks = []mcp.Content{}
	}
	structured, isObject := res.StructuredContent.(map[string]any)
	if isObject && !res.IsError {
		if content, err = extraBlocks(blocks, structured); err != nil {
			return nil, nil, err
		}
		return structured, content, nil
	}
	out, err := toObject(struct {
		Content []mcp.Content `json:"content"`
	}{blocks})
	if err != nil {
		return nil, nil, err
	}
	if res.StructuredContent != nil {
		out["structuredContent"] = res.StructuredContent
	}
	return out, nil, nil
}

// extraBlocks are the content blocks of a result whose output is its
// structured content, as JSON values, but for text blocks that hold the
// structured content's JSON; nil when none is left.
func extraBlocks(blocks []mcp.Content, structured map[string]any) ([]any, error) {
	var extra []mcp.Content
	for _, b := range blocks {
		if t, ok := b.(*mcp.TextContent); ok && sameJSON(t.Text, structured) {
			continue
		}
		extra = append(extra, b)
	}
	if len(extra) == 0 {
		return nil, nil
	}
	out, err := toObject(struct {
		Content []mcp.Content `json:"content"`
	}{extra})
	if err != nil {
		return nil, err
	}
	content, _ := out["content"].([]any)
	return content, nil
}

// sameJSON reports whether text is a JSON encoding of v.
func sameJSON(text string, v map[string]any) bool {
	var decoded any
	if json.Unmarshal([]byte(text), &decoded) != nil {
		return false
	}
	return reflect.DeepEqual(decoded, any(v))
}

// toObject normalises v to a JSON object.
func toObject(v any) (map[string]any, error) {
	if m, ok := v.(map[string]any); ok {
		return m, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode tool output: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("tool output is not an object: %w", err)
	}
	return m, nil
}

// listCatalog lists tools, and resources and prompts where the server
// offers them.
func listCatalog(ctx context.Context, cs *mcp.ClientSession, connID string) (catalog.Snapshot, error) {
	snap := catalog.Snapshot{ConnectionID: connID, FetchedAtEpochMs: time.Now().UnixMilli(), MaxAgeSeconds: catalog.DefaultMaxAgeSeconds,
		Tools: []catalog.Tool{}, Resources: []catalog.Resource{}, Prompts: []catalog.Prompt{}}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return catalog.Snapshot{}, fmt.Errorf("list tools of %q: %w", connID, err)
		}
		tool := catalog.Tool{Name: t.Name, Title: t.Title, Description: t.Description}
		if a := t.Annotations; a != nil {
			if a.Title != "" {
				tool.Title = a.Title
			}
			tool.ReadOnly = a.ReadOnlyHint
			tool.Idempotent = a.IdempotentHint
			tool.Destructive, tool.OpenWorld = a.DestructiveHint, a.OpenWorldHint
		}
		var err error
		if tool.InputSchema, err = schemaObject(t.InputSchema); err != nil {
			return catalog.Snapshot{}, fmt.Errorf("tool %q input schema: %w", t.Name, err)
		}
		if tool.OutputSchema, err = schemaObject(t.OutputSchema); err != nil {
			return catalog.Snapshot{}, fmt.Errorf("tool %q output schema: %w", t.Name, err)
		}
		snap.Tools = append(snap.Tools, tool)
	}
	caps := cs.InitializeResult().Capabilities
	if caps != nil && caps.Resources != nil {
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				return catalog.Snapshot{}, fmt.Errorf("list resources of %q: %w", connID, err)
			}
			snap.Resources = append(snap.Resources, catalog.Resource{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType})
		}
		for r, err := range cs.ResourceTemplates(ctx, nil) {
			if errors.Is(err, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound}) {
				break // a server of resources without templates
			}
			if err != nil {
				return catalog.Snapshot{}, fmt.Errorf("list resource templates of %q: %w", connID, err)
			}
			snap.ResourceTemplates = append(snap.ResourceTemplates, catalog.ResourceTemplate{URITemplate: r.URITemplate, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType})
		}
	}
	if caps != nil && caps.Prompts != nil {
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				return catalog.Snapshot{}, fmt.Errorf("list prompts of %q: %w", connID, err)
			}
			prompt := catalog.Prompt{Name: p.Name, Title: p.Title, Description: p.Description}
			for _, a := range p.Arguments {
				prompt.Arguments = append(prompt.Arguments, catalog.PromptArgument{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
			}
			snap.Prompts = append(snap.Prompts, prompt)
		}
	}
	return snap, nil
}

func schemaObject(s any) (map[string]any, error) {
	if s == nil {
		return nil, nil
	}
	return toObject(s)
}
