package mcpface

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// capabilities is a Backend that answers capabilities.inspect from a map
// (an unknown name is a 5000, as the server answers).
type capabilities map[string]protocol.ToolHints

func (c capabilities) Call(_ context.Context, method string, params, result any) error {
	if method != protocol.MethodCapabilitiesInspect {
		return jsonrpc.Errorf(jsonrpc.MethodNotFound, "%s", method)
	}
	name := params.(protocol.InspectCapabilityParams).QualifiedName
	h, ok := c[name]
	if !ok {
		return jsonrpc.Errorf(jsonrpc.OperationFailed, "unknown capability %q", name)
	}
	raw, _ := json.Marshal(protocol.CapabilityDetail{Name: name, Annotations: &h})
	return json.Unmarshal(raw, result)
}

func (c capabilities) Subscribe(context.Context, string, any, any, func(string, json.RawMessage)) error {
	return nil
}

func calls(names ...string) workflow.Plan {
	var p workflow.Plan
	for i, n := range names {
		p.Nodes = append(p.Nodes, workflow.Node{ID: string(rune('a' + i)), Type: workflow.NodeCall, Node: n})
	}
	return p
}

func TestAnnotationsAreAConservativeFloorOverTheSteps(t *testing.T) {
	is := is.New(t)
	reads := protocol.ToolHints{ReadOnly: true, Idempotent: true}
	caps := capabilities{
		"demo.default.get": reads,
		"demo.default.put": {Idempotent: true, Destructive: false, OpenWorld: true},
		"demo.default.rm":  {Destructive: true},
		"wf.std.constant":  reads,
	}
	d := protocol.Deployment{Bindings: []protocol.Binding{{LogicalSource: "demo", ConcreteSource: "demo.default"}}}
	floor := func(p workflow.Plan) (ro, idem, destructive, open bool) {
		h := hintCache{backend: caps, known: map[string]*protocol.ToolHints{}}
		a := h.floor(context.Background(), d, p)
		return a.ReadOnlyHint, a.IdempotentHint, *a.DestructiveHint, *a.OpenWorldHint
	}
	ro, idem, destructive, open := floor(calls("demo.get", "wf.std.constant"))
	is.True(ro && idem && !destructive && !open) // every step reads: read only
	ro, idem, destructive, open = floor(calls("demo.get", "demo.put"))
	is.True(!ro && idem && !destructive && open) // one step writes, idempotently, to an open world
	ro, idem, destructive, open = floor(calls("demo.get", "demo.rm"))
	is.True(!ro && !idem && destructive) // any destructive step makes the workflow destructive
	ro, _, destructive, open = floor(calls("demo.unknown"))
	is.True(!ro && destructive && open) // what the catalog does not know is assumed the worst, as MCP does
	ro, idem, destructive, _ = floor(workflow.Plan{Nodes: []workflow.Node{{ID: "x", Type: workflow.NodeInterrupt}}})
	is.True(ro && idem && !destructive) // no call: nothing outside the run changes
}

func TestAPlanCapabilityIsCalledOnItsBoundConnection(t *testing.T) {
	is := is.New(t)
	d := protocol.Deployment{Bindings: []protocol.Binding{{LogicalSource: "gh", ConcreteSource: "github.work"}, {LogicalSource: "gh.admin", ConcreteSource: "github.admin"}}}
	is.Equal(concrete(d, "gh.issues.create"), "github.work.issues.create")
	is.Equal(concrete(d, "gh.admin.delete"), "github.admin.delete") // the longest logical source wins
	is.Equal(concrete(d, "wf.std.constant"), "wf.std.constant")     // a built-in needs no binding
}

func TestAStepTotalIsKnownOnlyWithoutLoops(t *testing.T) {
	is := is.New(t)
	line := calls("a", "b", "c")
	line.Edges = []workflow.Edge{{From: "a", To: "b"}, {From: "b", To: "c"}}
	is.Equal(stepTotal(line), 3)
	loop := line
	loop.Edges = append(loop.Edges, workflow.Edge{From: "c", To: "a"})
	is.Equal(stepTotal(loop), 0)
	each := workflow.Plan{Nodes: []workflow.Node{{ID: "each", Type: workflow.NodeForeach}}}
	is.Equal(stepTotal(each), 0)
}

func TestTheInputSchemaIsAlwaysAnObject(t *testing.T) {
	is := is.New(t)
	s := inputSchema(nil)
	is.Equal(s["type"], "object")
	is.Equal(s["properties"], map[string]any{})
	s = inputSchema(workflow.Object{"properties": map[string]any{"n": map[string]any{"type": "integer"}}, "required": []any{"n"}})
	is.Equal(s["type"], "object")
	is.Equal(s["required"], []any{"n"})
}

func TestADescriptionIsNeverEmpty(t *testing.T) {
	is := is.New(t)
	empty := ""
	d := describe(protocol.Deployment{ID: "c.default"}, artifact{Artifact: protocol.Artifact{ID: "c", Version: 1, Description: &empty}, plan: calls("demo.counter")})
	is.Equal(d, `Runs the mcpflow workflow "c", which calls demo.counter.`)
}

// A description is in the artifact's words: its own description, or its
// title and the upstream tools it calls; never a deployment or artifact
// id, nor a built-in capability.
func TestADescriptionNamesNothingInternal(t *testing.T) {
	is := is.New(t)
	d := protocol.Deployment{ID: "echo.default", Bindings: []protocol.Binding{{LogicalSource: "everything.default", ConcreteSource: "everything.work"}}}
	scaffold := calls("everything.default.echo", "wf.std.runtime_error", "wf.recipes.extract_text_content")
	got := describe(d, artifact{Artifact: protocol.Artifact{ID: "echo", Version: 3, Title: "Echo"}, plan: scaffold})
	is.Equal(got, `Runs the mcpflow workflow "Echo", which calls echo.`)
	own := "  Echoes a message back.\n"
	got = describe(d, artifact{Artifact: protocol.Artifact{ID: "echo", Version: 3, Description: &own}, plan: scaffold})
	is.Equal(got, "Echoes a message back.") // the author's words alone
	ask := scaffold
	ask.Nodes = append(ask.Nodes, workflow.Node{ID: "approve", Type: workflow.NodeInterrupt})
	got = describe(d, artifact{Artifact: protocol.Artifact{ID: "echo", Version: 3, Description: &own}, plan: ask})
	is.True(strings.HasPrefix(got, "Echoes a message back. It may stop to ask a person")) // what to do then
	is.True(strings.Contains(got, "mcpflow_resume_run"))
	for _, internal := range []string{"wf.", "echo.default", "v3", "everything"} {
		is.True(!strings.Contains(got, internal))
	}
}
