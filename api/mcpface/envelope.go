package mcpface

import (
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
		"outcome":   nullable("string", "The outcome the run ended with."),
		"output":    nullable("object", "A completed run's output."),
		"interrupt": map[string]any{"type": "object", "description": "What an interrupted run waits for: its payload, the outcomes it accepts and the resume_schema of what to send back."},
		"error":     map[string]any{"type": "string", "description": "Why a run failed."},
	},
	"required": []any{"run_id", "status", "outcome", "output"},
}

// nullable is the schema of a value of one type or null, spelled as
// anyOf branches of one type each: a type array (["string", "null"]) is
// legal JSON Schema that single-type dialects (Gemini's OpenAPI subset)
// reject or weaken, and the MCP inspector's --strict flags it.
func nullable(typ, description string) map[string]any {
	return map[string]any{"anyOf": []any{map[string]any{"type": typ}, map[string]any{"type": "null"}}, "description": description}
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

// toolError is a tool result that tells the model what to correct.
func toolError(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}, IsError: true}
}

// interruptedNote tells the model what an interrupted run waits for.
func interruptedNote(e envelope) string {
	return fmt.Sprintf("The run %s waits for a person: ask your user for what its interrupt asks (payload, resume_schema and outcomes above), then call mcpflow_resume_run with run_id %q, the payload and, if more than one is offered, the outcome.", e.RunID, e.RunID)
}
