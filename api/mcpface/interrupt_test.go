package mcpface

import (
	"maps"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

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

func TestAnUpstreamElicitationIsAskedAsTheServerAskedIt(t *testing.T) {
	is := is.New(t)
	id := "run_1"
	requested := map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string", "title": "Name"}}, "required": []any{"name"}}
	p := pendingOf(protocol.RunResult{RunID: &id, Interrupt: protocol.Object{"id": "upstream:e:g1.1", "kind": "elicitation",
		"payload":  map[string]any{"message": "Who are you?", "mode": "form", "connection": "e", "request_id": "g1.1"},
		"outcomes": []any{"accept", "decline", "cancel"}, "resume_schema": requested}})
	is.True(p.upstream)
	is.Equal(p.outcomeField, "")                  // the client's action is the outcome
	is.Equal(map[string]any(p.schema), requested) // the server's schema, no outcome field added
	in, err := p.request("")
	is.NoErr(err)
	is.Equal(in.(*mcp.ElicitParams).Message, "Who are you?")

	p = pendingOf(protocol.RunResult{RunID: &id, Interrupt: protocol.Object{"id": "upstream:e:g1.2", "kind": "elicitation",
		"payload":  map[string]any{"message": "Sign in", "mode": "url", "url": "https://example.com/x", "elicitation_id": "el-1"},
		"outcomes": []any{"accept", "decline", "cancel"}, "resume_schema": map[string]any{"type": "object"}}})
	in, err = p.request("")
	is.NoErr(err)
	url := in.(*mcp.ElicitParams)
	is.Equal(url.Mode, "url")
	is.Equal(url.URL, "https://example.com/x")
	is.Equal(url.ElicitationID, "el-1")
}

func TestASamplingInterruptIsForwardedOnlyUnderPolicyClient(t *testing.T) {
	is := is.New(t)
	id := "run_1"
	params := map[string]any{"maxTokens": 100, "messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "hi"}}}}
	payload := map[string]any{"connection": "e", "request_id": "g1.1", "policy": "client"}
	maps.Copy(payload, params)
	p := pendingOf(protocol.RunResult{RunID: &id, Interrupt: protocol.Object{"kind": "sampling", "payload": payload, "outcomes": []any{"accept", "decline"}}})
	is.True(p.sampling != nil)
	in, err := p.request("")
	is.NoErr(err)
	is.Equal(in.(*mcp.CreateMessageParams).MaxTokens, int64(100)) // the server's params, without mcpflow's keys
	is.Equal(len(in.(*mcp.CreateMessageParams).Messages), 1)

	delete(payload, "policy")
	p = pendingOf(protocol.RunResult{RunID: &id, Interrupt: protocol.Object{"kind": "sampling", "payload": payload, "outcomes": []any{"accept", "decline"}}})
	is.True(p.sampling == nil) // policy interrupt: for whoever resumes the run
}

func TestASamplingAnswerIsTheMessageWithOneBlock(t *testing.T) {
	is := is.New(t)
	message, err := sampled(&mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "m", Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}})
	is.NoErr(err)
	is.Equal(message["content"], map[string]any{"type": "text", "text": "hello"})
	is.Equal(message["model"], "m")
}
