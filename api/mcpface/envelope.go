package mcpface

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/api/protocol"
)

// envelope is every workflow tool's structured result: the run as it
// stands, so that completed, failed, interrupted and cancelled runs all
// conform to one output schema.
type envelope struct {
	RunID     string          `json:"run_id"`
	Status    string          `json:"status"`
	Outcome   *string         `json:"outcome"`
	Output    protocol.Object `json:"output"`
	Interrupt protocol.Object `json:"interrupt,omitempty"`
	Error     *string         `json:"error,omitempty"`
}

// envelopeSchema is the tools' outputSchema.
var envelopeSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"run_id":    map[string]any{"type": "string", "description": "The run's id, for mcpflow_get_run, mcpflow_resume_run and mcpflow_cancel_run."},
		"status":    map[string]any{"type": "string", "enum": []any{"running", "completed", "failed", "cancelled", "interrupted"}},
		"outcome":   map[string]any{"type": []any{"string", "null"}, "description": "The outcome the run ended with."},
		"output":    map[string]any{"type": []any{"object", "null"}, "description": "A completed run's output."},
		"interrupt": map[string]any{"type": "object", "description": "What an interrupted run waits for: its payload, the outcomes it accepts and the resume_schema of what to send back."},
		"error":     map[string]any{"type": "string", "description": "Why a run failed."},
	},
	"required": []any{"run_id", "status", "outcome", "output"},
}

// envelopeOf is the envelope of a run result.
func envelopeOf(r protocol.RunResult) envelope {
	e := envelope{Status: r.Status, Outcome: r.Outcome, Output: r.Output, Error: r.Error}
	if r.RunID != nil {
		e.RunID = *r.RunID
	}
	if r.Status == "interrupted" {
		e.Interrupt = r.Interrupt
	}
	return e
}

// result is the tool result of a run: the envelope as structuredContent
// and as a JSON text block (for clients that read only content); then,
// for a completed run whose output holds MCP content, those blocks with
// their own types (an image stays an image for the model); for a failed
// run, why; then note, if any, for the model. Only a failed run is an
// error.
func result(e envelope, note string) *mcp.CallToolResult {
	raw, err := json.Marshal(e)
	if err != nil { // an envelope of JSON values always encodes
		raw = fmt.Appendf(nil, `{"run_id":%q,"status":%q}`, e.RunID, e.Status)
	}
	content := []mcp.Content{&mcp.TextContent{Text: string(raw)}}
	switch {
	case e.Status == "completed":
		content = append(content, outputBlocks(e.Output)...)
	case e.Status == "failed" && e.Error != nil:
		content = append(content, &mcp.TextContent{Text: "The run failed: " + *e.Error})
	}
	if note != "" {
		content = append(content, &mcp.TextContent{Text: note})
	}
	return &mcp.CallToolResult{Content: content, StructuredContent: json.RawMessage(raw), IsError: e.Status == "failed"}
}

// outputBlocks are the MCP content blocks a run's output holds as its
// "content" list (the output of a workflow that returns a tool's
// content, as a scaffold does), decoded as MCP content of their own
// types; none when the list is not all MCP content blocks. They are in
// the envelope's JSON too: nothing is left out.
func outputBlocks(output protocol.Object) []mcp.Content {
	blocks, ok := output["content"].([]any)
	if !ok || len(blocks) == 0 {
		return nil
	}
	raw, err := json.Marshal(map[string]any{"content": blocks})
	if err != nil {
		return nil
	}
	var decoded mcp.CallToolResult
	if err := json.Unmarshal(raw, &decoded); err != nil {
		return nil // not MCP content: the envelope carries it as JSON
	}
	return decoded.Content
}

// toolError is a tool result that tells the model what to correct.
func toolError(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}, IsError: true}
}

// interruptedNote tells the model what an interrupted run waits for.
func interruptedNote(e envelope) string {
	return fmt.Sprintf("The run %s waits for a person: ask your user for what its interrupt asks (payload, resume_schema and outcomes above), then call mcpflow_resume_run with run_id %q, the payload and, if more than one is offered, the outcome.", e.RunID, e.RunID)
}
