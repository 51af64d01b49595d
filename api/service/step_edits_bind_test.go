package service_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/protocol"
)

// workspaceWithOneEcho is an empty draft with one echo step, "call", routed to
// the end and bound to nothing; it answers the revision (3).
func workspaceWithOneEcho(t *testing.T, f *fixture) int {
	t.Helper()
	workspaceHolding(t, f, "ws", draftWithNoSteps)
	return stepEdit(t, f, protocol.MethodWorkspaceAddStepFromCapability, `{"workspace_id":"ws","revision":2,
		"step_id":"call","capability_name":"fake.one.echo","routes":{"ok":"__end__","error":"__end__"}}`).Revision
}

func bindRequest(revision int, source, target string) string {
	return jsonOf(map[string]any{"workspace_id": "ws", "revision": revision, "step_id": "call", "source_path": source, "target_path": target})
}

func TestBindAGraphPathToAnInputProjectsTheWorkflowSchema(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	rev := workspaceWithOneEcho(t, f)
	res := stepEdit(t, f, protocol.MethodWorkspaceBind, bindRequest(rev, "input.text", "local.message"))
	is.Equal(res.Revision, rev+1)
	is.Equal(res.Status, "valid")
	draft := draftOf(t, f, "ws")
	is.Equal(at(draft, "steps", "call", "input"), []any{map[string]any{"target": "message", "path": "input.text"}})
	is.Equal(at(draft, "input_schema", "properties", "text"), map[string]any{"type": "string"}) // echo's schema of message

	// Binding the same again changes nothing.
	res = stepEdit(t, f, protocol.MethodWorkspaceBind, bindRequest(rev+1, "input.text", "local.message"))
	is.Equal(res.Revision, rev+1)

	// Binding the same target from elsewhere replaces its binding; the
	// state field it reads is declared, the input field stays.
	res = stepEdit(t, f, protocol.MethodWorkspaceBind, bindRequest(rev+1, "state.draft", "local.message"))
	is.Equal(res.Revision, rev+2)
	draft = draftOf(t, f, "ws")
	is.Equal(at(draft, "steps", "call", "input"), []any{map[string]any{"target": "message", "path": "state.draft"}})
	is.Equal(at(draft, "state_schema", "properties", "draft"), map[string]any{"type": "string"})
	is.Equal(at(draft, "input_schema", "properties", "text"), map[string]any{"type": "string"})

	// A field the draft declares already keeps its declaration.
	res = stepEdit(t, f, protocol.MethodWorkspaceBind, bindRequest(rev+2, "input.text", "local.message"))
	is.Equal(res.Revision, rev+3)
	is.Equal(at(draftOf(t, f, "ws"), "input_schema", "properties", "text"), map[string]any{"type": "string"})
}

func TestBindAnOutputToStateAndToTheWorkflowOutput(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	// echo requires message: bind it, or the draft is invalid
	// (required_input_unbound).
	rev := stepEdit(t, f, protocol.MethodWorkspaceBind, bindRequest(workspaceWithOneEcho(t, f), "input.text", "local.message")).Revision
	res := stepEdit(t, f, protocol.MethodWorkspaceBind, bindRequest(rev, "local.message", "state.reply"))
	is.Equal(res.Revision, rev+1)
	draft := draftOf(t, f, "ws")
	is.Equal(at(draft, "steps", "call", "output"), []any{map[string]any{"source": "message", "target": "state.reply"}})
	is.Equal(at(draft, "state_schema", "properties", "reply"), map[string]any{"type": "string"})

	// local → output goes through state: the step's output of message now
	// writes state.answer, and the workflow output answer reads it.
	res = stepEdit(t, f, protocol.MethodWorkspaceBind, bindRequest(rev+1, "local.message", "output.answer"))
	is.Equal(res.Revision, rev+2)
	is.Equal(res.Status, "valid")
	draft = draftOf(t, f, "ws")
	is.Equal(at(draft, "steps", "call", "output"), []any{map[string]any{"source": "message", "target": "state.answer"}})
	is.Equal(at(draft, "output"), []any{map[string]any{"target": "answer", "path": "state.answer"}})
	is.Equal(at(draft, "state_schema", "properties", "answer"), map[string]any{"type": "string"})
	is.Equal(at(draft, "output_schema", "properties", "answer"), map[string]any{"type": "string"})

	// Idempotent.
	res = stepEdit(t, f, protocol.MethodWorkspaceBind, bindRequest(rev+2, "local.message", "output.answer"))
	is.Equal(res.Revision, rev+2)

	// Renaming the output replaces the workflow output binding that read
	// the old state field.
	res = stepEdit(t, f, protocol.MethodWorkspaceBind, bindRequest(rev+2, "local.message", "output.echoed"))
	is.Equal(res.Revision, rev+3)
	draft = draftOf(t, f, "ws")
	is.Equal(at(draft, "output"), []any{map[string]any{"target": "echoed", "path": "state.echoed"}})
	is.Equal(at(draft, "steps", "call", "output"), []any{map[string]any{"source": "message", "target": "state.echoed"}})
}

func TestBindRefusalsChangeNothing(t *testing.T) {
	f := newFixture(t)
	rev := workspaceWithOneEcho(t, f)
	stepEdit(t, f, protocol.MethodWorkspaceAddStep, jsonOf(map[string]any{"workspace_id": "ws", "revision": rev, "step_id": "stop", "step": map[string]any{"end": map[string]any{}}}))
	stepEdit(t, f, protocol.MethodWorkspaceAddStep, jsonOf(map[string]any{"workspace_id": "ws", "revision": rev + 1, "step_id": "gone", "step": map[string]any{"use": "fake.one.vanished"}}))
	rev += 2
	with := func(step, source, target string) string {
		return jsonOf(map[string]any{"workspace_id": "ws", "revision": rev, "step_id": step, "source_path": source, "target_path": target})
	}
	refusedWithoutChange(t, f, "ws", protocol.MethodWorkspaceBind, map[string]func(error){
		"unknown step": keyError(t), "not a use step": valueError(t), "unknown capability": keyError(t),
		"undeclared input": valueError(t), "undeclared output": valueError(t), "graph to graph": valueError(t),
		"local to local": valueError(t), "context source": valueError(t), "malformed path": valueError(t),
		"bare root": valueError(t), "whole output": valueError(t),
	}, map[string]string{
		"unknown step":       with("ghost", "input.text", "local.message"),
		"not a use step":     with("stop", "input.text", "local.message"),
		"unknown capability": with("gone", "input.text", "local.message"),
		"undeclared input":   with("call", "input.text", "local.nope"),
		"undeclared output":  with("call", "local.nope", "state.x"),
		"graph to graph":     with("call", "input.a", "state.b"),
		"local to local":     with("call", "local.message", "local.message"),
		"context source":     with("call", "context.loop_item", "local.message"),
		"malformed path":     with("call", "input.bad key", "local.message"),
		"bare root":          with("call", "input", "local.message"),
		"whole output":       with("call", "local.message", "output"),
	})
	rereadFirst(t, conflictLeavesTheWorkspace(t, f, "ws", protocol.MethodWorkspaceBind, bindRequest(1, "input.text", "local.nope")))
}
