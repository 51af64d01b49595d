package mcpface

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/protocol"
)

func TestAFlatResumeSchemaBecomesAFormWithItsOutcomes(t *testing.T) {
	is := is.New(t)
	resume := protocol.Object{"type": "object",
		"properties": map[string]any{"approved": map[string]any{"type": "boolean"}, "comment": map[string]any{"type": "string"}},
		"required":   []any{"approved"}}
	form, field := formOf(resume, []string{"submitted", "rejected"})
	is.Equal(field, "outcome")
	props := form["properties"].(map[string]any)
	is.Equal(props["outcome"].(map[string]any)["enum"], []any{"submitted", "rejected"})
	is.Equal(form["required"], []any{"approved", "outcome"})

	form, field = formOf(resume, []string{"submitted"})
	is.Equal(field, "") // one outcome: nothing to pick
	is.Equal(form["required"], []any{"approved"})

	taken := protocol.Object{"properties": map[string]any{"outcome": map[string]any{"type": "string"}}}
	_, field = formOf(taken, []string{"a", "b"})
	is.Equal(field, "mcpflow_outcome") // the schema's own field is left alone
}

func TestANestedResumeSchemaIsNoForm(t *testing.T) {
	is := is.New(t)
	for _, prop := range []map[string]any{
		{"type": "object", "properties": map[string]any{}},
		{"type": "array", "items": map[string]any{"type": "string"}},
		{"type": []any{"string", "null"}},
	} {
		form, _ := formOf(protocol.Object{"properties": map[string]any{"x": prop}}, nil)
		is.True(form == nil) // the model is asked instead
	}
	form, _ := formOf(protocol.Object{"type": "object", "additionalProperties": true}, nil)
	is.True(form != nil) // no fields: a plain confirmation
}

func TestAnInterruptsMessageIsItsOwn(t *testing.T) {
	is := is.New(t)
	id := "run_1"
	p := pendingOf(protocol.RunResult{RunID: &id, Interrupt: protocol.Object{"id": "interrupt:ask", "node_id": "ask", "kind": "approval",
		"payload": map[string]any{"message": "Ship it?"}, "outcomes": []any{"submitted"}, "resume_schema": map[string]any{"type": "object"}}})
	is.Equal(p.message, "Ship it?")
	is.Equal(p.id, "interrupt:ask")
	is.Equal(p.runID, "run_1")
	is.Equal(askMessage(p, "at /approved: expected boolean"), "Ship it?\n\nThe last answer was refused: at /approved: expected boolean")
	p = pendingOf(protocol.RunResult{RunID: &id, Interrupt: protocol.Object{"node_id": "ask", "kind": "approval"}})
	is.Equal(p.message, `The workflow waits at step "ask" (approval) for your answer.`)
}
