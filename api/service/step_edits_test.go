package service_test

import (
	"maps"
	"slices"
	"strconv"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/contract"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// draftWithNoSteps is a draft with its contract and no steps: what create_empty
// stores.
const draftWithNoSteps = `{"name":"flow","outcomes":["ok"],"output":[],"start":"","steps":{},"routes":{},
	"input_schema":{"type":"object","properties":{}},
	"state_schema":{"type":"object","properties":{}},
	"output_schema":{"type":"object","properties":{}}}`

// workspaceHolding stores workspace id holding draft (a JSON document) at
// revision 2 and answers that revision.
func workspaceHolding(t *testing.T, f *fixture, id, draft string) int {
	t.Helper()
	is := is.New(t)
	is.Helper()
	scaffold(t, f, id, "wf.std.constant")
	res := mustCall[protocol.WorkspaceResult](t, f, protocol.MethodWorkspaceReplaceDocument,
		`{"workspace_id":"`+id+`","revision":1,"draft":`+draft+`}`)
	is.Equal(res.Revision, 2)
	return res.Revision
}

// stepEdit calls a step edit that must succeed and match the manifest.
func stepEdit(t *testing.T, f *fixture, method, params string) protocol.DraftEditResult {
	t.Helper()
	return conforming[protocol.DraftEditResult](t, f, method, params)
}

// draftOf reads the stored draft of a workspace.
func draftOf(t *testing.T, f *fixture, id string) map[string]any {
	t.Helper()
	return getWorkspace(t, f, id).Draft
}

// at walks a decoded JSON document along keys.
func at(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// refusedWithoutChange calls method with each params, expects the error
// check to pass and the workspace to be exactly as it was.
func refusedWithoutChange(t *testing.T, f *fixture, id, method string, cases map[string]func(error), params map[string]string) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	before := jsonOf(getWorkspace(t, f, id))
	for name, check := range cases {
		_, err := f.call(t, method, params[name])
		if err == nil {
			t.Logf("%s: %s was accepted", name, params[name])
		}
		is.True(err != nil) // the edit is refused
		check(err)
		is.Equal(jsonOf(getWorkspace(t, f, id)), before) // a refused edit changes nothing
	}
}

func keyError(t *testing.T) func(error) {
	return func(err error) { domainError(t, err, "KeyError") }
}

func valueError(t *testing.T) func(error) {
	return func(err error) { domainError(t, err, "ValueError") }
}

func badParams(t *testing.T) func(error) {
	return func(err error) { invalidParams(t, err) }
}

// conflictLeavesTheWorkspace checks that an edit at a stale revision
// answers "conflict", points at the current revision and changes nothing.
func conflictLeavesTheWorkspace(t *testing.T, f *fixture, id, method, params string) protocol.DraftEditResult {
	t.Helper()
	is := is.New(t)
	is.Helper()
	before := getWorkspace(t, f, id)
	res := stepEdit(t, f, method, params)
	is.Equal(res.Status, "conflict")
	is.Equal(codes(res.Diagnostics), []string{"revision_conflict"})
	is.Equal(res.Revision, before.Revision)                  // the current revision
	is.Equal(jsonOf(getWorkspace(t, f, id)), jsonOf(before)) // nothing changed
	return res
}

// rereadFirst checks that a step edit's conflict advises reading the
// workspace again.
func rereadFirst(t *testing.T, res protocol.DraftEditResult) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	is.True(res.NextActions.RecommendedNextTool != nil)
	is.Equal(*res.NextActions.RecommendedNextTool, protocol.MethodWorkspaceGet)
	is.Equal(res.NextActions.PatchExamples[0].Request["workspace_id"], res.WorkspaceID)
}

func TestAddStepFromCapabilityWiresTheStepInOneRevision(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	rev := workspaceHolding(t, f, "ws", draftWithNoSteps)

	res := stepEdit(t, f, protocol.MethodWorkspaceAddStepFromCapability, `{"workspace_id":"ws","revision":`+strconv.Itoa(rev)+`,
		"step_id":"greet","capability_name":"fake.one.echo","routes":{"ok":"__end__","error":"__end__"},
		"input_map":{"input.text":"message"},"bind_outputs":{"message":"state.reply"},
		"desc":"Echo the text","retry":2,"timeout_seconds":30}`)
	is.Equal(res.Revision, rev+1)
	is.Equal(res.Status, "valid")
	is.Equal(res.Summary.Start, "greet") // the first step of a draft with no start becomes it
	is.Equal(*res.NextActions.RecommendedNextTool, protocol.MethodWorkspaceCreateArtifact)
	is.True(*res.NextActions.CanSaveNow)
	save := res.NextActions.PatchExamples[0].Request // create_artifact's params, which name no revision
	is.Equal(slices.Sorted(maps.Keys(save)), []string{"artifact_id", "outcomes", "title", "version", "workspace_id"})

	draft := draftOf(t, f, "ws")
	is.Equal(at(draft, "steps", "greet"), map[string]any{
		"use": "fake.one.echo", "desc": "Echo the text", "retry": 2.0, "timeout_seconds": 30.0,
		"input":  []any{map[string]any{"target": "message", "path": "input.text"}},
		"output": []any{map[string]any{"source": "message", "target": "state.reply"}},
	})
	is.Equal(at(draft, "routes", "greet"), map[string]any{"ok": "__end__", "error": "__end__"})
	is.Equal(at(draft, "input_schema", "properties", "text"), map[string]any{"type": "string"}) // projected from echo's message
	is.Equal(at(draft, "state_schema", "properties", "reply"), map[string]any{"type": "string"})

	// A second step, routed from the first; its input reads the state the
	// first one wrote, so nothing more is projected.
	res = stepEdit(t, f, protocol.MethodWorkspaceAddStepFromCapability, `{"workspace_id":"ws","revision":`+strconv.Itoa(rev+1)+`,
		"step_id":"again","capability_name":"fake.one.echo","route_from_step":"greet",
		"routes":{"ok":"__end__","error":"__end__"},"input_bindings":[{"target":"message","path":"state.reply"}]}`)
	is.Equal(res.Revision, rev+2)
	is.Equal(res.Status, "valid")
	draft = draftOf(t, f, "ws")
	is.Equal(at(draft, "routes", "greet", "ok"), "again") // route_from_outcome defaults to ok
	is.Equal(at(draft, "start"), "greet")                 // the start stays
	is.Equal(len(at(draft, "state_schema", "properties").(map[string]any)), 1)

	// A capability with one outcome is routed to the end by default, and a
	// literal input is checked against its schema.
	res = stepEdit(t, f, protocol.MethodWorkspaceAddStepFromCapability, `{"workspace_id":"ws","revision":`+strconv.Itoa(rev+2)+`,
		"step_id":"fixed","capability_name":"wf.std.constant","route_from_step":"again","route_from_outcome":"error",
		"input_bindings":[{"target":"value","value":"fallback"}]}`)
	is.Equal(res.Revision, rev+3)
	draft = draftOf(t, f, "ws")
	is.Equal(at(draft, "routes", "fixed"), map[string]any{"ok": "__end__"})
	is.Equal(at(draft, "routes", "again", "error"), "fixed")
	is.Equal(at(draft, "steps", "fixed", "output"), []any{}) // a use step always has its binding lists
}

func TestAddStepFromCapabilityRefusalsChangeNothing(t *testing.T) {
	f := newFixture(t)
	rev := workspaceHolding(t, f, "ws", draftWithNoSteps)
	stepEdit(t, f, protocol.MethodWorkspaceAddStepFromCapability, `{"workspace_id":"ws","revision":2,
		"step_id":"greet","capability_name":"fake.one.echo","routes":{"ok":"__end__","error":"__end__"}}`)
	rev++
	r := strconv.Itoa(rev)
	base := `"workspace_id":"ws","revision":` + r + `,"step_id":"next","capability_name":"fake.one.echo"`
	routes := `,"routes":{"ok":"__end__","error":"__end__"}`
	params := map[string]string{
		"existing step":         `{"workspace_id":"ws","revision":` + r + `,"step_id":"greet","capability_name":"fake.one.echo"` + routes + `}`,
		"reserved step id":      `{"workspace_id":"ws","revision":` + r + `,"step_id":"__end__","capability_name":"fake.one.echo"` + routes + `}`,
		"a declared outcome":    `{` + base + `,"routes":{"ok":"__end__"}}`,
		"an unknown outcome":    `{` + base + `,"routes":{"ok":"__end__","error":"__end__","maybe":"__end__"}}`,
		"no routes, 2 outcomes": `{` + base + `}`,
		"unknown capability":    `{"workspace_id":"ws","revision":` + r + `,"step_id":"next","capability_name":"fake.one.nope"}`,
		"map and bindings":      `{` + base + routes + `,"input_map":{"input.x":"message"},"input_bindings":[]}`,
		"undeclared input":      `{` + base + routes + `,"input_map":{"input.x":"nope"}}`,
		"overlapping inputs":    `{` + base + routes + `,"input_bindings":[{"target":"message","value":"a"},{"target":"message","value":"b"}]}`,
		"ill-typed literal":     `{` + base + routes + `,"input_bindings":[{"target":"message","value":42}]}`,
		"undeclared output":     `{` + base + routes + `,"bind_outputs":{"nope":"state.x"}}`,
		"unknown route source":  `{` + base + routes + `,"route_from_step":"ghost"}`,
		"undeclared from":       `{` + base + routes + `,"route_from_step":"greet","route_from_outcome":"maybe"}`,
		"negative retry":        `{` + base + routes + `,"retry":-1}`,
		"zero timeout":          `{` + base + routes + `,"timeout_seconds":0}`,
		"empty desc":            `{` + base + routes + `,"desc":""}`,
		"bad state path":        `{` + base + routes + `,"bind_outputs":{"message":"output.x"}}`,
	}
	refusedWithoutChange(t, f, "ws", protocol.MethodWorkspaceAddStepFromCapability, map[string]func(error){
		"existing step": valueError(t), "reserved step id": valueError(t), "a declared outcome": valueError(t),
		"an unknown outcome": valueError(t), "no routes, 2 outcomes": valueError(t), "unknown capability": keyError(t),
		"map and bindings": valueError(t), "undeclared input": valueError(t), "overlapping inputs": valueError(t),
		"ill-typed literal": valueError(t), "undeclared output": valueError(t), "unknown route source": valueError(t),
		"undeclared from": valueError(t), "negative retry": badParams(t), "zero timeout": badParams(t),
		"empty desc": badParams(t), "bad state path": badParams(t),
	}, params)

	// A stale revision wins over everything else that is wrong.
	rereadFirst(t, conflictLeavesTheWorkspace(t, f, "ws", protocol.MethodWorkspaceAddStepFromCapability,
		`{"workspace_id":"ws","revision":2,"step_id":"greet","capability_name":"fake.one.nope"}`))
}

// stepOfEveryKind adds one step of each of the nine kinds; together they make a
// valid workflow.
var stepOfEveryKind = []struct{ id, params string }{
	{"count", `"step":{"use":"fake.one.counter","output":[{"source":"count","target":"state.count"}]},"routes":{"ok":"each","error":"stop"}`},
	{"each", `"step":{"foreach":{"over":"input.items","as":"item"}},"routes":{"done":"gate"}`},
	{"body", `"step":{"join":{}},"routes":{"done":"each"},"incoming":{"step_id":"each","outcome":"loop"}`},
	{"gate", `"step":{"when":{"if":{"op":"exists","path":"state.count"},"then":"pick","otherwise":"stop"}}`},
	{"pick", `"step":{"choose":{"clauses":[{"if":{"op":"gt","left":{"path":"state.count"},"right":{"value":1}},"then":"sort"}],"default":"sort"}}`},
	{"sort", `"step":{"match":{"value":"input.n","cases":[{"equals":1,"then":"ask"}],"default":"ask"}}`},
	{"ask", `"step":{"interrupt":{"kind":"approval","resume":[{"source":"approved","target":"state.approved"}]}},"routes":{"submitted":"child"}`},
	{"child", `"step":{"subgraph":{"workflow":{"artifact_id":"child","version":1}}},"routes":{"ok":"__end__"}`},
	{"stop", `"step":{"end":{"outcome":"stopped"}}`},
}

const draftForEveryKind = `{"name":"kinds","outcomes":["ok","stopped"],"output":[],"start":"","steps":{},"routes":{},
	"input_schema":{"type":"object","properties":{"items":{"type":"array"},"n":{"type":"number"}}},
	"state_schema":{"type":"object","properties":{"count":{"type":"integer"},"approved":{"type":"boolean"}}},
	"output_schema":{"type":"object","properties":{}}}`

func TestAddStepAddsEveryKindOfStep(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	rev := workspaceHolding(t, f, "ws", draftForEveryKind)
	var res protocol.DraftEditResult
	for _, k := range stepOfEveryKind {
		res = stepEdit(t, f, protocol.MethodWorkspaceAddStep, `{"workspace_id":"ws","revision":`+strconv.Itoa(rev)+`,"step_id":"`+k.id+`",`+k.params+`}`)
		rev++
		is.Equal(res.Revision, rev) // each addition is one revision, valid or not
	}
	if res.Status != "valid" {
		t.Logf("diagnostics: %+v", res.Diagnostics)
	}
	is.Equal(res.Status, "valid")
	is.Equal(res.Summary.StepCount, 9)
	is.Equal(res.Summary.Start, "count") // the first step added

	draft := draftOf(t, f, "ws")
	is.Equal(at(draft, "routes", "each"), map[string]any{"done": "gate", "loop": "body"}) // incoming added each.loop
	is.Equal(at(draft, "steps", "count"), map[string]any{"use": "fake.one.counter", "input": []any{},
		"output": []any{map[string]any{"source": "count", "target": "state.count"}}})
	is.Equal(at(draft, "steps", "body"), map[string]any{"join": map[string]any{}})
	is.Equal(at(draft, "steps", "stop"), map[string]any{"end": map[string]any{"outcome": "stopped"}})
	is.Equal(at(draft, "steps", "gate", "when", "then"), "pick")
	is.Equal(at(draft, "steps", "ask", "interrupt", "kind"), "approval")
	is.Equal(at(draft, "steps", "child", "subgraph", "workflow", "artifact_id"), "child")
	is.Equal(at(draft, "steps", "sort", "match", "value"), "input.n")

	compiled := mustCall[protocol.CompileWorkspaceResult](t, f, protocol.MethodWorkspaceCompile, `{"workspace_id":"ws"}`)
	is.True(compiled.CompiledPlan != nil) // the assembled draft compiles
}

func TestAddStepRefusalsChangeNothing(t *testing.T) {
	f := newFixture(t)
	workspaceHolding(t, f, "ws", draftForEveryKind)
	stepEdit(t, f, protocol.MethodWorkspaceAddStep, `{"workspace_id":"ws","revision":2,"step_id":"count",`+stepOfEveryKind[0].params+`}`)
	stepEdit(t, f, protocol.MethodWorkspaceAddStep, `{"workspace_id":"ws","revision":3,"step_id":"stop",`+stepOfEveryKind[8].params+`}`)
	base := `"workspace_id":"ws","revision":4,"step_id":"next",`
	params := map[string]string{
		"two kinds":           `{` + base + `"step":{"join":{},"end":{}}}`,
		"no kind":             `{` + base + `"step":{}}`,
		"unknown key":         `{` + base + `"step":{"join":{},"colour":"red"}}`,
		"bad payload":         `{` + base + `"step":{"when":{"if":{"op":"exists","path":"state.count"},"then":"a","extra":1}}}`,
		"routes of a when":    `{` + base + `"step":{"when":{"if":{"op":"exists","path":"state.count"},"then":"stop"}},"routes":{"true":"stop"}}`,
		"undeclared outcome":  `{` + base + `"step":{"join":{}},"routes":{"ok":"stop"}}`,
		"unknown incoming":    `{` + base + `"step":{"join":{}},"incoming":{"step_id":"ghost"}}`,
		"undeclared incoming": `{` + base + `"step":{"join":{}},"incoming":{"step_id":"count","outcome":"maybe"}}`,
		"incoming from end":   `{` + base + `"step":{"join":{}},"incoming":{"step_id":"stop","outcome":"ok"}}`,
		"existing id":         `{"workspace_id":"ws","revision":4,"step_id":"count","step":{"join":{}}}`,
		"reserved id":         `{"workspace_id":"ws","revision":4,"step_id":"__end__","step":{"join":{}}}`,
	}
	refusedWithoutChange(t, f, "ws", protocol.MethodWorkspaceAddStep, map[string]func(error){
		"two kinds": badParams(t), "no kind": badParams(t), "unknown key": badParams(t), "bad payload": badParams(t),
		"routes of a when": valueError(t), "undeclared outcome": valueError(t), "unknown incoming": valueError(t),
		"undeclared incoming": valueError(t), "incoming from end": valueError(t), "existing id": valueError(t),
		"reserved id": valueError(t),
	}, params)
	rereadFirst(t, conflictLeavesTheWorkspace(t, f, "ws", protocol.MethodWorkspaceAddStep,
		`{"workspace_id":"ws","revision":3,"step_id":"count","step":{"join":{}}}`))
}

func TestAnInvalidEditStillBumpsTheRevisionAndSaysWhatToDoNext(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	workspaceHolding(t, f, "ws", draftWithNoSteps)
	res := stepEdit(t, f, protocol.MethodWorkspaceAddStep, `{"workspace_id":"ws","revision":2,"step_id":"call",
		"step":{"use":"fake.one.counter"},"routes":{"ok":"__end__"}}`)
	is.Equal(res.Revision, 3)
	is.Equal(res.Status, "invalid")
	is.True(hasCode(res.Diagnostics, "missing_outcome_edge")) // error is not routed
	is.Equal(*res.NextActions.RecommendedNextTool, protocol.MethodWorkspaceBranch)
	is.True(!*res.NextActions.CanSaveNow)
	is.Equal(len(res.NextActions.PatchExamples), 1)
	example := res.NextActions.PatchExamples[0]
	is.Equal(example.Tool, protocol.MethodWorkspaceBranch)
	is.Equal(jsonOf(example.Request), `{"revision":3,"routes":{"error":"__end__"},"step_id":"call","workspace_id":"ws"}`)

	// Following the advice makes the draft valid.
	res = stepEdit(t, f, example.Tool, jsonOf(example.Request))
	is.Equal(res.Revision, 4)
	is.Equal(res.Status, "valid")
}

func TestBranchSetsSomeRoutesOfAStepAndKeepsTheOthers(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws", "fake.one.echo") // call.ok → __end__, call.error → tool_error
	res := stepEdit(t, f, protocol.MethodWorkspaceBranch, `{"workspace_id":"ws","revision":1,"step_id":"call","routes":{"ok":"tool_error"}}`)
	is.Equal(res.Revision, 2)
	is.Equal(at(draftOf(t, f, "ws"), "routes", "call"), map[string]any{"ok": "tool_error", "error": "tool_error"})

	// Setting what is already there changes nothing, not even the revision.
	res = stepEdit(t, f, protocol.MethodWorkspaceBranch, `{"workspace_id":"ws","revision":2,"step_id":"call","routes":{"error":"tool_error"}}`)
	is.Equal(res.Revision, 2)
	res = stepEdit(t, f, protocol.MethodWorkspaceBranch, `{"workspace_id":"ws","revision":2,"step_id":"call","routes":{}}`)
	is.Equal(res.Revision, 2)

	// A route to a step that does not exist yet is kept, and reported.
	res = stepEdit(t, f, protocol.MethodWorkspaceBranch, `{"workspace_id":"ws","revision":2,"step_id":"call","routes":{"ok":"later"}}`)
	is.Equal(res.Revision, 3)
	is.Equal(res.Status, "invalid")
	is.True(hasCode(res.Diagnostics, "unknown_edge_destination"))
	is.Equal(*res.NextActions.RecommendedNextTool, protocol.MethodWorkspaceAddStepFromCapability)
}

func TestBranchRefusalsChangeNothing(t *testing.T) {
	f := newFixture(t)
	scaffold(t, f, "ws", "fake.one.echo")
	refusedWithoutChange(t, f, "ws", protocol.MethodWorkspaceBranch, map[string]func(error){
		"no routes": badParams(t), "empty target": valueError(t), "unknown workspace": keyError(t),
	}, map[string]string{
		"no routes":         `{"workspace_id":"ws","revision":1,"step_id":"call"}`,
		"empty target":      `{"workspace_id":"ws","revision":1,"step_id":"call","routes":{"ok":""}}`,
		"unknown workspace": `{"workspace_id":"nope","revision":1,"step_id":"call","routes":{"ok":"__end__"}}`,
	})
	rereadFirst(t, conflictLeavesTheWorkspace(t, f, "ws", protocol.MethodWorkspaceBranch, `{"workspace_id":"ws","revision":7,"step_id":"call","routes":{"ok":"tool_error"}}`))
}

func TestHandlePointsSeveralOutcomesAtOneTarget(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws", "fake.one.echo")
	res := stepEdit(t, f, protocol.MethodWorkspaceHandle, `{"workspace_id":"ws","revision":1,"target":"__end__",
		"branches":[{"step_id":"call","outcome":"error"},{"step_id":"call","outcome":"ok"},{"step_id":"call","outcome":"error"}]}`)
	is.Equal(res.Revision, 2)
	is.Equal(at(draftOf(t, f, "ws"), "routes", "call"), map[string]any{"ok": "__end__", "error": "__end__"})
	is.True(hasCode(res.Diagnostics, "unreachable_step")) // tool_error is no longer reached: a warning
	is.Equal(res.Status, "valid")

	res = stepEdit(t, f, protocol.MethodWorkspaceHandle, `{"workspace_id":"ws","revision":2,"target":"__end__","branches":[]}`)
	is.Equal(res.Revision, 2) // nothing to do
	res = stepEdit(t, f, protocol.MethodWorkspaceHandle, `{"workspace_id":"ws","revision":2,"target":"__end__","branches":[{"step_id":"call","outcome":"ok"}]}`)
	is.Equal(res.Revision, 2) // already so
}

func TestHandleRefusalsChangeNothing(t *testing.T) {
	f := newFixture(t)
	scaffold(t, f, "ws", "fake.one.echo")
	refusedWithoutChange(t, f, "ws", protocol.MethodWorkspaceHandle, map[string]func(error){
		"no branches": badParams(t), "empty target": badParams(t), "empty outcome": badParams(t),
	}, map[string]string{
		"no branches":   `{"workspace_id":"ws","revision":1,"target":"__end__"}`,
		"empty target":  `{"workspace_id":"ws","revision":1,"target":"","branches":[{"step_id":"call","outcome":"ok"}]}`,
		"empty outcome": `{"workspace_id":"ws","revision":1,"target":"__end__","branches":[{"step_id":"call","outcome":""}]}`,
	})
	rereadFirst(t, conflictLeavesTheWorkspace(t, f, "ws", protocol.MethodWorkspaceHandle,
		`{"workspace_id":"ws","revision":2,"target":"__end__","branches":[{"step_id":"call","outcome":"error"}]}`))
}

func TestUpdateCapabilityStepPatchesOnlyWhatIsGiven(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws", "fake.one.echo")
	before := at(draftOf(t, f, "ws"), "steps", "call").(map[string]any)

	res := stepEdit(t, f, protocol.MethodWorkspaceUpdateCapabilityStep, `{"workspace_id":"ws","revision":1,"step_id":"call",
		"update":{"desc":"Echo it","retry":0,"timeout_seconds":5,"input":[{"target":"message","value":"hi"}]}}`)
	is.Equal(res.Revision, 2) // one revision for every field
	is.Equal(res.Status, "valid")
	step := at(draftOf(t, f, "ws"), "steps", "call").(map[string]any)
	is.Equal(step["desc"], "Echo it")
	is.Equal(step["retry"], 0.0)
	is.Equal(step["timeout_seconds"], 5.0)
	is.Equal(step["input"], []any{map[string]any{"target": "message", "value": "hi"}})
	is.Equal(step["output"], before["output"]) // outputs stay
	is.Equal(step["use"], "fake.one.echo")

	// null clears; what is left out stays.
	res = stepEdit(t, f, protocol.MethodWorkspaceUpdateCapabilityStep, `{"workspace_id":"ws","revision":2,"step_id":"call","update":{"desc":null,"retry":null}}`)
	is.Equal(res.Revision, 3)
	step = at(draftOf(t, f, "ws"), "steps", "call").(map[string]any)
	_, hasDesc := step["desc"]
	_, hasRetry := step["retry"]
	is.True(!hasDesc && !hasRetry)
	is.Equal(step["timeout_seconds"], 5.0)

	// The same values again change nothing (the typed params encode what
	// is set, null for what is cleared, and leave the rest out).
	params := protocol.UpdateCapabilityStepParams{WorkspaceID: "ws", Revision: 3, StepID: "call",
		Update: protocol.CapabilityStepUpdate{TimeoutSeconds: protocol.Put(5), Desc: protocol.Clear[string]()}}
	is.Equal(jsonOf(params.Update), `{"desc":null,"timeout_seconds":5}`)
	res = stepEdit(t, f, protocol.MethodWorkspaceUpdateCapabilityStep, jsonOf(params))
	is.Equal(res.Revision, 3)

	// An input path is projected into the workflow schema like any binding.
	res = stepEdit(t, f, protocol.MethodWorkspaceUpdateCapabilityStep, `{"workspace_id":"ws","revision":3,"step_id":"call","update":{"input":[{"target":"message","path":"state.note"}]}}`)
	is.Equal(res.Revision, 4)
	is.Equal(at(draftOf(t, f, "ws"), "state_schema", "properties", "note"), map[string]any{"type": "string"})
}

func TestUpdateCapabilityStepRefusalsChangeNothing(t *testing.T) {
	f := newFixture(t)
	scaffold(t, f, "ws", "fake.one.echo")
	stepEdit(t, f, protocol.MethodWorkspaceAddStep, `{"workspace_id":"ws","revision":1,"step_id":"stop","step":{"end":{}}}`)
	base := `"workspace_id":"ws","revision":2,"step_id":"call",`
	refusedWithoutChange(t, f, "ws", protocol.MethodWorkspaceUpdateCapabilityStep, map[string]func(error){
		"empty update": badParams(t), "null input": badParams(t), "unknown field": badParams(t), "negative retry": badParams(t),
		"unknown step": keyError(t), "not a use step": valueError(t), "undeclared input": valueError(t), "ill-typed literal": valueError(t),
	}, map[string]string{
		"empty update":      `{` + base + `"update":{}}`,
		"null input":        `{` + base + `"update":{"input":null}}`,
		"unknown field":     `{` + base + `"update":{"use":"fake.one.counter"}}`,
		"negative retry":    `{` + base + `"update":{"retry":-1}}`,
		"unknown step":      `{"workspace_id":"ws","revision":2,"step_id":"ghost","update":{"retry":1}}`,
		"not a use step":    `{"workspace_id":"ws","revision":2,"step_id":"stop","update":{"retry":1}}`,
		"undeclared input":  `{` + base + `"update":{"input":[{"target":"nope","value":1}]}}`,
		"ill-typed literal": `{` + base + `"update":{"input":[{"target":"message","value":1}]}}`,
	})
	rereadFirst(t, conflictLeavesTheWorkspace(t, f, "ws", protocol.MethodWorkspaceUpdateCapabilityStep, `{"workspace_id":"ws","revision":1,"step_id":"ghost","update":{"retry":1}}`))
}

func TestTheFirstStepOfAnEmptyWorkspaceBecomesItsStart(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	created := stepEdit(t, f, protocol.MethodWorkspaceCreateEmpty, `{"workspace_id":"ws","name":"flow"}`)
	is.Equal(created.Status, "invalid")
	is.Equal(*created.NextActions.RecommendedNextTool, protocol.MethodWorkspaceAddStepFromCapability)

	res := stepEdit(t, f, protocol.MethodWorkspaceAddStep, `{"workspace_id":"ws","revision":1,"step_id":"call",
		"step":{"use":"fake.one.counter"},"routes":{"ok":"__end__"}}`)
	is.Equal(res.Revision, 2)
	is.Equal(res.Summary.Start, "call")
	is.Equal(codes(workflowErrors(res)), []string{"missing_outcome_edge"})

	// handle routes an outcome that had no route yet.
	res = stepEdit(t, f, protocol.MethodWorkspaceHandle, `{"workspace_id":"ws","revision":2,"target":"__end__","branches":[{"step_id":"call","outcome":"error"}]}`)
	is.Equal(res.Revision, 3)
	is.Equal(res.Status, "valid")

	res = stepEdit(t, f, protocol.MethodWorkspaceAddStep, `{"workspace_id":"ws","revision":3,"step_id":"after",
		"step":{"join":{}},"routes":{"done":"__end__"},"incoming":{"step_id":"call"}}`)
	is.Equal(res.Revision, 4)
	is.Equal(res.Summary.Start, "call") // the start stays
	is.Equal(at(draftOf(t, f, "ws"), "routes", "call", "ok"), "after")
}

// workflowErrors keeps the diagnostics of a result that block.
func workflowErrors(res protocol.DraftEditResult) []protocol.Diagnostic {
	var blocking []protocol.Diagnostic
	for _, d := range res.Diagnostics {
		if d.IsError() {
			blocking = append(blocking, d)
		}
	}
	return blocking
}

func TestTheStepEditParamsOfTheseTestsMatchTheManifest(t *testing.T) {
	is := is.New(t)
	requests := map[string][]string{
		protocol.MethodWorkspaceAddStepFromCapability: {`{"workspace_id":"ws","revision":2,"step_id":"greet","capability_name":"fake.one.echo",
			"routes":{"ok":"__end__","error":"__end__"},"input_map":{"input.text":"message"},"bind_outputs":{"message":"state.reply"},
			"desc":"Echo the text","retry":2,"timeout_seconds":30,"route_from_step":"x","route_from_outcome":"ok"}`,
			`{"workspace_id":"ws","revision":2,"step_id":"s","capability_name":"c","input_bindings":[{"target":"value","value":"fallback"}]}`},
		protocol.MethodWorkspaceBind:                 {bindRequest(3, "local.message", "output.answer")},
		protocol.MethodWorkspaceBranch:               {`{"workspace_id":"ws","revision":1,"step_id":"call","routes":{"ok":"tool_error"}}`},
		protocol.MethodWorkspaceHandle:               {`{"workspace_id":"ws","revision":1,"target":"__end__","branches":[{"step_id":"call","outcome":"error"}]}`},
		protocol.MethodWorkspaceUpdateCapabilityStep: {`{"workspace_id":"ws","revision":1,"step_id":"call","update":{"desc":null,"retry":0,"input":[{"target":"message","path":"state.note"}]}}`},
	}
	for _, k := range stepOfEveryKind {
		requests[protocol.MethodWorkspaceAddStep] = append(requests[protocol.MethodWorkspaceAddStep],
			`{"workspace_id":"ws","revision":2,"step_id":"`+k.id+`",`+k.params+`}`)
	}
	for method, list := range requests {
		for _, params := range list {
			if err := contract.Default().ValidateParams(method, []byte(params)); err != nil {
				t.Logf("%s %s: %v", method, params, err)
				is.Fail() // the edge accepts what the handlers are tested with
			}
		}
	}
}
