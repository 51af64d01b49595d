package service_test

import (
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow/authoring"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// The authoring operations name the methods to use instead of a map by
// the API's names, which they cannot import.
func TestTheMapHintNamesTheBindingSetters(t *testing.T) {
	is := is.New(t)
	is.Equal(authoring.MapHint, fmt.Sprintf("replace the complete canonical binding list instead (%s, %s or %s)",
		protocol.MethodWorkspaceSetStepInputBindings, protocol.MethodWorkspaceSetStepOutputBindings, protocol.MethodWorkspaceSetWorkflowOutputBindings))
}

func TestSetStepInputBindingsReplacesTheListAndDeclaresNewSources(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoWorkspace(t, f)

	res := stepEdit(t, f, protocol.MethodWorkspaceSetStepInputBindings, `{"workspace_id":"ws","revision":1,"step_id":"call",
		"bindings":[{"target":"message","path":"input.text"}]}`)
	is.Equal(res.Revision, 2)
	is.Equal(res.Status, "valid") // input.text is declared from the capability's message field
	doc := draftOf(t, f, "ws")
	is.Equal(at(doc, "steps", "call", "input"), []any{map[string]any{"target": "message", "path": "input.text"}})
	is.Equal(at(doc, "input_schema", "properties", "text"), map[string]any{"type": "string"})

	literal := stepEdit(t, f, protocol.MethodWorkspaceSetStepInputBindings, `{"workspace_id":"ws","revision":2,"step_id":"call",
		"bindings":[{"target":"message","value":"hello"}]}`)
	is.Equal(literal.Revision, 3)
	is.Equal(literal.Status, "valid")

	same := stepEdit(t, f, protocol.MethodWorkspaceSetStepInputBindings, `{"workspace_id":"ws","revision":3,"step_id":"call",
		"bindings":[{"target":"message","value":"hello"}]}`)
	is.Equal(same.Revision, 3) // the same list again changes nothing

	refusedWithoutChange(t, f, "ws", protocol.MethodWorkspaceSetStepInputBindings,
		map[string]func(error){
			"overlap": valueError(t), "undeclared target": valueError(t), "wrong literal": valueError(t),
			"two sources": badParams(t), "no source": badParams(t), "bad path": badParams(t), "unknown key": badParams(t),
			"unknown step": keyError(t),
		},
		map[string]string{
			"overlap":           `{"workspace_id":"ws","revision":3,"step_id":"call","bindings":[{"target":"message","value":"a"},{"target":".","value":{}}]}`,
			"undeclared target": `{"workspace_id":"ws","revision":3,"step_id":"call","bindings":[{"target":"nope","value":"a"}]}`,
			"wrong literal":     `{"workspace_id":"ws","revision":3,"step_id":"call","bindings":[{"target":"message","value":42}]}`,
			"two sources":       `{"workspace_id":"ws","revision":3,"step_id":"call","bindings":[{"target":"message","value":"a","path":"input.text"}]}`,
			"no source":         `{"workspace_id":"ws","revision":3,"step_id":"call","bindings":[{"target":"message"}]}`,
			"bad path":          `{"workspace_id":"ws","revision":3,"step_id":"call","bindings":[{"target":"message","path":"output.x"}]}`,
			"unknown key":       `{"workspace_id":"ws","revision":3,"step_id":"call","bindings":[{"target":"message","value":"a","extra":1}]}`,
			"unknown step":      `{"workspace_id":"ws","revision":3,"step_id":"nope","bindings":[]}`,
		})
	conflictLeavesTheWorkspace(t, f, "ws", protocol.MethodWorkspaceSetStepInputBindings, `{"workspace_id":"ws","revision":1,"step_id":"call","bindings":[]}`)
}

func TestBindingSettersRefuseAStepOfAnotherKindOrAnUnknownCapability(t *testing.T) {
	f := newFixture(t)
	echoWorkspace(t, f)
	stepEdit(t, f, protocol.MethodWorkspacePatch, `{"workspace_id":"ws","revision":1,"patch":[
		{"op":"add","path":"/steps/meet","value":{"join":{}}},
		{"op":"add","path":"/steps/ghost","value":{"use":"fake.one.nope"}}]}`)
	for _, method := range []string{protocol.MethodWorkspaceSetStepInputBindings, protocol.MethodWorkspaceSetStepOutputBindings} {
		refusedWithoutChange(t, f, "ws", method,
			map[string]func(error){"join": valueError(t), "ghost": keyError(t)},
			map[string]string{
				"join":  `{"workspace_id":"ws","revision":2,"step_id":"meet","bindings":[]}`,
				"ghost": `{"workspace_id":"ws","revision":2,"step_id":"ghost","bindings":[]}`,
			})
	}
	refusedWithoutChange(t, f, "ws", protocol.MethodWorkspaceSetStepInputMap,
		map[string]func(error){"join": valueError(t)},
		map[string]string{"join": `{"workspace_id":"ws","revision":2,"step_id":"meet","input_map":{}}`})
}

func TestSetStepInputMapReplacesOrMergesPathBindings(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoWorkspace(t, f)

	replaced := stepEdit(t, f, protocol.MethodWorkspaceSetStepInputMap, `{"workspace_id":"ws","revision":1,"step_id":"call","input_map":{"input.text":"message"}}`)
	is.Equal(replaced.Revision, 2)
	is.Equal(replaced.Status, "invalid") // a legacy map declares nothing: input.text is unknown
	is.True(hasCode(replaced.Diagnostics, "invalid_source_path"))
	is.Equal(at(draftOf(t, f, "ws"), "steps", "call", "input"), []any{map[string]any{"target": "message", "path": "input.text"}})

	merged := stepEdit(t, f, protocol.MethodWorkspaceSetStepInputMap, `{"workspace_id":"ws","revision":2,"step_id":"tool_error",
		"input_map":{"input.message":"details"},"merge":true}`)
	is.Equal(merged.Revision, 3)
	is.Equal(at(draftOf(t, f, "ws"), "steps", "tool_error", "input"), []any{
		map[string]any{"target": "message", "value": "echo failed"},        // the literal is kept
		map[string]any{"target": "details", "path": "context.prior_error"}, // so is the path binding of another path
		map[string]any{"target": "details", "path": "input.message"},       // the map's binding is added
	})

	retarget := stepEdit(t, f, protocol.MethodWorkspaceSetStepInputMap, `{"workspace_id":"ws","revision":3,"step_id":"tool_error",
		"input_map":{"input.message":"message"},"merge":true}`)
	is.Equal(retarget.Revision, 4)
	is.Equal(at(draftOf(t, f, "ws"), "steps", "tool_error", "input"), []any{
		map[string]any{"target": "message", "value": "echo failed"},
		map[string]any{"target": "details", "path": "context.prior_error"},
		map[string]any{"target": "message", "path": "input.message"}, // retargeted in place
	})

	// An expression binding cannot be read back as a map: merging is refused.
	stepEdit(t, f, protocol.MethodWorkspaceSetStepInputBindings, `{"workspace_id":"ws","revision":4,"step_id":"call",
		"bindings":[{"target":"message","expression":{"kind":"literal","value":"x"}}]}`)
	refusedWithoutChange(t, f, "ws", protocol.MethodWorkspaceSetStepInputMap,
		map[string]func(error){"expression": valueError(t), "bad key": badParams(t), "bad target": badParams(t), "no map": badParams(t), "unknown step": keyError(t)},
		map[string]string{
			"expression":   `{"workspace_id":"ws","revision":5,"step_id":"call","input_map":{"input.text":"message"},"merge":true}`,
			"bad key":      `{"workspace_id":"ws","revision":5,"step_id":"call","input_map":{"output.x":"message"}}`,
			"bad target":   `{"workspace_id":"ws","revision":5,"step_id":"call","input_map":{"input.x":"a..b"}}`,
			"no map":       `{"workspace_id":"ws","revision":5,"step_id":"call"}`,
			"unknown step": `{"workspace_id":"ws","revision":5,"step_id":"nope","input_map":{}}`,
		})
	conflictLeavesTheWorkspace(t, f, "ws", protocol.MethodWorkspaceSetStepInputMap, `{"workspace_id":"ws","revision":1,"step_id":"call","input_map":{}}`)
}

func TestSetStepOutputBindingsReplacesTheListAndDeclaresNewStateFields(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoWorkspace(t, f)

	res := stepEdit(t, f, protocol.MethodWorkspaceSetStepOutputBindings, `{"workspace_id":"ws","revision":1,"step_id":"call",
		"bindings":[{"source":"message","target":"state.message"},{"source":"message","target":"state.echoed"},{"source":".","target":"state.raw"}]}`)
	is.Equal(res.Revision, 2)
	is.Equal(res.Status, "valid")
	doc := draftOf(t, f, "ws")
	is.Equal(len(at(doc, "steps", "call", "output").([]any)), 3) // one source may feed several targets
	is.Equal(at(doc, "state_schema", "properties", "echoed"), map[string]any{"type": "string"})
	is.Equal(at(doc, "state_schema", "properties", "raw", "type"), "object") // "." has the whole output's schema

	same := stepEdit(t, f, protocol.MethodWorkspaceSetStepOutputBindings, `{"workspace_id":"ws","revision":2,"step_id":"call",
		"bindings":[{"source":"message","target":"state.message"},{"source":"message","target":"state.echoed"},{"source":".","target":"state.raw"}]}`)
	is.Equal(same.Revision, 2) // an exact replacement keeps the revision

	refusedWithoutChange(t, f, "ws", protocol.MethodWorkspaceSetStepOutputBindings,
		map[string]func(error){"overlap": valueError(t), "undeclared source": valueError(t), "bare state": badParams(t), "not a list": badParams(t)},
		map[string]string{
			"overlap":           `{"workspace_id":"ws","revision":2,"step_id":"call","bindings":[{"source":"message","target":"state.a"},{"source":".","target":"state.a.b"}]}`,
			"undeclared source": `{"workspace_id":"ws","revision":2,"step_id":"call","bindings":[{"source":"nope","target":"state.a"}]}`,
			"bare state":        `{"workspace_id":"ws","revision":2,"step_id":"call","bindings":[{"source":"message","target":"state"}]}`,
			"not a list":        `{"workspace_id":"ws","revision":2,"step_id":"call","bindings":{}}`,
		})
	conflictLeavesTheWorkspace(t, f, "ws", protocol.MethodWorkspaceSetStepOutputBindings, `{"workspace_id":"ws","revision":1,"step_id":"call","bindings":[]}`)
}

func TestSetStepOutputMapReplacesOrMergesOutputBindings(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoWorkspace(t, f)
	stepEdit(t, f, protocol.MethodWorkspaceSetStepOutputBindings, `{"workspace_id":"ws","revision":1,"step_id":"call",
		"bindings":[{"source":"message","target":"state.message"},{"source":".","target":"state.raw"}]}`)

	merged := stepEdit(t, f, protocol.MethodWorkspaceSetStepOutputMap, `{"workspace_id":"ws","revision":2,"step_id":"call",
		"output_map":{"message":"state.copy"},"merge":true}`)
	is.Equal(merged.Revision, 3)
	is.Equal(at(draftOf(t, f, "ws"), "steps", "call", "output"), []any{
		map[string]any{"source": "message", "target": "state.copy"}, // retargeted in place
		map[string]any{"source": ".", "target": "state.raw"},        // the rest is kept
	})

	replaced := stepEdit(t, f, protocol.MethodWorkspaceSetStepOutputMap, `{"workspace_id":"ws","revision":3,"step_id":"call","output_map":{"message":"state.message"}}`)
	is.Equal(replaced.Revision, 4)
	is.Equal(at(draftOf(t, f, "ws"), "steps", "call", "output"), []any{map[string]any{"source": "message", "target": "state.message"}})

	// A source read twice cannot be retargeted through a map.
	stepEdit(t, f, protocol.MethodWorkspaceSetStepOutputBindings, `{"workspace_id":"ws","revision":4,"step_id":"call",
		"bindings":[{"source":"message","target":"state.message"},{"source":"message","target":"state.copy"}]}`)
	refusedWithoutChange(t, f, "ws", protocol.MethodWorkspaceSetStepOutputMap,
		map[string]func(error){"ambiguous": valueError(t), "not a state path": badParams(t), "unknown step": keyError(t)},
		map[string]string{
			"ambiguous":        `{"workspace_id":"ws","revision":5,"step_id":"call","output_map":{"message":"state.other"},"merge":true}`,
			"not a state path": `{"workspace_id":"ws","revision":5,"step_id":"call","output_map":{"message":"input.x"}}`,
			"unknown step":     `{"workspace_id":"ws","revision":5,"step_id":"nope","output_map":{}}`,
		})
	conflictLeavesTheWorkspace(t, f, "ws", protocol.MethodWorkspaceSetStepOutputMap, `{"workspace_id":"ws","revision":1,"step_id":"call","output_map":{}}`)
}

func TestSetWorkflowOutputBindingsReplacesTheOutputProjection(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoWorkspace(t, f)

	res := stepEdit(t, f, protocol.MethodWorkspaceSetWorkflowOutputBindings, `{"workspace_id":"ws","revision":1,
		"bindings":[{"target":"message","path":"state.message"},{"target":"copy","path":"state.message"},{"target":"message_2","path":"input.message"}]}`)
	is.Equal(res.Revision, 2)
	is.Equal(res.Status, "valid")
	doc := draftOf(t, f, "ws")
	is.Equal(len(doc["output"].([]any)), 3)
	is.Equal(at(doc, "output_schema", "properties", "copy"), map[string]any{"type": "string"}) // declared from its source

	literal := stepEdit(t, f, protocol.MethodWorkspaceSetWorkflowOutputBindings, `{"workspace_id":"ws","revision":2,
		"bindings":[{"target":"message","value":"fixed"}]}`)
	is.Equal(literal.Revision, 3)
	is.Equal(literal.Status, "valid")

	refusedWithoutChange(t, f, "ws", protocol.MethodWorkspaceSetWorkflowOutputBindings,
		map[string]func(error){
			"context": valueError(t), "undeclared source": valueError(t), "overlap": valueError(t),
			"undeclared literal target": valueError(t), "wrong literal": valueError(t), "expression": badParams(t),
		},
		map[string]string{
			"context":                   `{"workspace_id":"ws","revision":3,"bindings":[{"target":"message","path":"context.prior_outcome"}]}`,
			"undeclared source":         `{"workspace_id":"ws","revision":3,"bindings":[{"target":"message","path":"state.nope"}]}`,
			"overlap":                   `{"workspace_id":"ws","revision":3,"bindings":[{"target":"message","path":"state.message"},{"target":"message","value":"x"}]}`,
			"undeclared literal target": `{"workspace_id":"ws","revision":3,"bindings":[{"target":"nope","value":"x"}]}`,
			"wrong literal":             `{"workspace_id":"ws","revision":3,"bindings":[{"target":"message","value":1}]}`,
			"expression":                `{"workspace_id":"ws","revision":3,"bindings":[{"target":"message","expression":{"kind":"literal","value":"x"}}]}`,
		})
	conflictLeavesTheWorkspace(t, f, "ws", protocol.MethodWorkspaceSetWorkflowOutputBindings, `{"workspace_id":"ws","revision":1,"bindings":[]}`)
}

func TestSetWorkflowOutputMapReplacesOrMergesPathOutputs(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoWorkspace(t, f)

	replaced := stepEdit(t, f, protocol.MethodWorkspaceSetWorkflowOutputMap, `{"workspace_id":"ws","revision":1,"output_map":{"state.message":"reply"}}`)
	is.Equal(replaced.Revision, 2)
	is.Equal(replaced.Status, "valid") // reply is declared from state.message's schema
	doc := draftOf(t, f, "ws")
	is.Equal(doc["output"], []any{map[string]any{"target": "reply", "path": "state.message"}})
	is.Equal(at(doc, "output_schema", "properties", "reply"), map[string]any{"type": "string"})

	stepEdit(t, f, protocol.MethodWorkspaceSetWorkflowOutputBindings, `{"workspace_id":"ws","revision":2,"bindings":[{"target":"message","value":"fixed"}]}`)
	merged := stepEdit(t, f, protocol.MethodWorkspaceSetWorkflowOutputMap, `{"workspace_id":"ws","revision":3,"output_map":{"state.message":"reply"},"merge":true}`)
	is.Equal(merged.Revision, 4)
	is.Equal(draftOf(t, f, "ws")["output"], []any{
		map[string]any{"target": "message", "value": "fixed"}, // a literal output survives a merge
		map[string]any{"target": "reply", "path": "state.message"},
	})

	stepEdit(t, f, protocol.MethodWorkspaceSetWorkflowOutputBindings, `{"workspace_id":"ws","revision":4,
		"bindings":[{"target":"message","path":"state.message"},{"target":"reply","path":"state.message"}]}`)
	refusedWithoutChange(t, f, "ws", protocol.MethodWorkspaceSetWorkflowOutputMap,
		map[string]func(error){"ambiguous": valueError(t), "bad source": badParams(t), "no map": badParams(t)},
		map[string]string{
			"ambiguous":  `{"workspace_id":"ws","revision":5,"output_map":{"state.message":"other"},"merge":true}`,
			"bad source": `{"workspace_id":"ws","revision":5,"output_map":{"local.x":"y"}}`,
			"no map":     `{"workspace_id":"ws","revision":5}`,
		})
	conflictLeavesTheWorkspace(t, f, "ws", protocol.MethodWorkspaceSetWorkflowOutputMap, `{"workspace_id":"ws","revision":1,"output_map":{}}`)
}
