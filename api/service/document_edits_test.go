package service_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/protocol"
)

// The echo scaffold every test here starts from (revision 1, valid):
//
//	input_schema {message: string, required}; state and output {message}
//	call:       use fake.one.echo, input message <- input.message,
//	            output message -> state.message; ok -> end, error -> tool_error
//	tool_error: use wf.std.runtime_error, input message = "echo failed",
//	            details <- context.prior_error
//	output:     message <- state.message
func echoWorkspace(t *testing.T, f *fixture) {
	t.Helper()
	scaffold(t, f, "ws", "fake.one.echo")
}

func TestPatchDraftAppliesTheJSONPatchAndValidatesTheResult(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	draft := jsonOf(unreachableDraft())

	valid := conforming[protocol.PatchDraftResult](t, f, protocol.MethodDraftsPatch, `{"draft":`+draft+`,"patch":[
		{"op":"replace","path":"/name","value":"renamed"},
		{"op":"remove","path":"/steps/orphan"}]}`)
	is.Equal(valid.Status, "valid")
	is.Equal(codes(valid.Diagnostics), []string{"error_routed_to_end"}) // the unreachable step, and its warning, are gone
	is.Equal(valid.Draft["name"], "renamed")                            // the patched draft
	is.True(valid.CompiledPlan != nil)                                  // and its plan
	is.Equal(planOf(t, valid.CompiledPlan).Name, "renamed")             // compiled from the patched draft
	is.Equal(len(planOf(t, valid.CompiledPlan).Nodes), 1)               // without the removed step
	is.Equal(at(valid.Draft, "steps", "orphan"), nil)

	invalid := conforming[protocol.PatchDraftResult](t, f, protocol.MethodDraftsPatch, `{"draft":`+draft+`,"patch":[
		{"op":"add","path":"/routes/call/ok","value":"later"}]}`)
	is.Equal(invalid.Status, "invalid")
	is.True(hasCode(invalid.Diagnostics, "unknown_edge_destination"))
	is.Equal(at(invalid.Draft, "routes", "call", "ok"), "later") // an invalid result keeps the patched draft
	is.True(invalid.CompiledPlan == nil)

	whole := conforming[protocol.PatchDraftResult](t, f, protocol.MethodDraftsPatch, `{"draft":`+draft+`,"patch":[
		{"op":"move","from":"/steps","path":""},
		{"op":"add","path":"/more","value":1}]}`)
	is.Equal(whole.Status, "invalid") // the document is now the old steps object
	is.Equal(whole.Draft, map[string]any{"call": map[string]any{"use": "fake.one.counter"}, "orphan": map[string]any{"end": map[string]any{}}, "more": 1.0})
}

func TestPatchDraftReportsAPatchThatCannotApplyWithoutADraft(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	draft := jsonOf(unreachableDraft())
	for name, c := range map[string]struct{ patch, code, path string }{
		"missing path":   {`[{"op":"remove","path":"/nope"}]`, "patch_invalid", "patch"},
		"unknown op":     {`[{"op":"frobnicate","path":"/name"}]`, "patch_invalid", "patch"},
		"failed test":    {`[{"op":"test","path":"/name","value":"other"}]`, "patch_invalid", "patch"},
		"negative index": {`[{"op":"add","path":"/outcomes/-1","value":"x"}]`, "patch_invalid", "patch"},
		"root array":     {`[{"op":"replace","path":"","value":[1,2]}]`, "draft_not_object", ""},
		"root scalar":    {`[{"op":"add","path":"","value":"text"}]`, "draft_not_object", ""},
		"root copy":      {`[{"op":"copy","from":"/name","path":""}]`, "draft_not_object", ""},
		"root from none": {`[{"op":"move","from":"/nope","path":""}]`, "patch_invalid", "patch"},
	} {
		raw := f.raw(t, protocol.MethodDraftsPatch, `{"draft":`+draft+`,"patch":`+c.patch+`}`)
		res := generic(t, raw)
		_, hasDraft := res["draft"]
		if hasDraft || res["status"] != "invalid" {
			t.Logf("%s: %s", name, raw)
		}
		is.Equal(res["status"], "invalid") // the patch is refused
		is.True(!hasDraft)                 // and no draft is answered
		d := res["diagnostics"].([]any)[0].(map[string]any)
		is.Equal(d["code"], c.code)
		is.Equal(d["path"], c.path)
		conforming[protocol.PatchDraftResult](t, f, protocol.MethodDraftsPatch, `{"draft":`+draft+`,"patch":`+c.patch+`}`)
	}
	for _, params := range []string{
		`{"draft":` + draft + `,"patch":{"op":"remove","path":"/name"}}`, // not a list
		`{"draft":` + draft + `,"patch":[1]}`,                            // not an operation object
		`{"patch":[]}`,                                                   // no draft
		`{"draft":` + draft + `}`,                                        // no patch
		`{"draft":` + draft + `,"patch":[],"extra":1}`,                   // unknown key
	} {
		_, err := f.call(t, protocol.MethodDraftsPatch, params)
		invalidParams(t, err)
	}
}

func TestDraftsCreateFromCapabilityIsTheWorkspaceScaffold(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	res := conforming[protocol.CreateFromCapabilityResult](t, f, protocol.MethodDraftsCreateFromCapability,
		`{"workspace_id":"ws","capability_name":"fake.one.echo","title":"Echo"}`)
	is.Equal(res.Status, "valid")
	is.Equal(res.Revision, 1)
	is.Equal(res.WrapperHints.CapabilityName, "fake.one.echo")
	is.Equal(*res.NextActions.RecommendedNextTool, protocol.MethodWorkspaceValidate) // a method of this API
	is.Equal(getWorkspace(t, f, "ws").Summary.Steps, []string{"call", "tool_error"}) // stored like the workspace method's

	again := conforming[protocol.CreateFromCapabilityResult](t, f, protocol.MethodDraftsCreateFromCapability,
		`{"workspace_id":"ws","capability_name":"fake.one.counter"}`)
	is.Equal(again.Status, "conflict")
	is.Equal(codes(again.Diagnostics), []string{"workspace_exists"})

	_, err := f.call(t, protocol.MethodDraftsCreateFromCapability, `{"workspace_id":"other","capability_name":"fake.one.nope"}`)
	domainError(t, err, "KeyError")
	list := mustCall[protocol.ListWorkspacesResult](t, f, protocol.MethodWorkspaceList, `{}`)
	is.Equal(len(list.Workspaces), 1) // the refused call created nothing
}

func TestPatchWorkspaceCommitsEveryAppliedPatchAsOneRevision(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoWorkspace(t, f)

	named := stepEdit(t, f, protocol.MethodWorkspacePatch, `{"workspace_id":"ws","revision":1,"patch":[{"op":"replace","path":"/name","value":"renamed"}]}`)
	is.Equal(named.Revision, 2)
	is.Equal(named.Status, "valid")
	is.Equal(named.Summary.Name, "renamed")
	is.Equal(draftOf(t, f, "ws")["name"], "renamed")

	dangling := stepEdit(t, f, protocol.MethodWorkspacePatch, `{"workspace_id":"ws","revision":2,"patch":[{"op":"add","path":"/routes/call/ok","value":"later"}]}`)
	is.Equal(dangling.Revision, 3)       // an invalid result still commits
	is.Equal(dangling.Status, "invalid") // and says why
	is.True(hasCode(dangling.Diagnostics, "unknown_edge_destination"))
	is.Equal(at(draftOf(t, f, "ws"), "routes", "call", "ok"), "later")
}

func TestAPatchThatCannotApplyToAWorkspaceIsNoRevision(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoWorkspace(t, f)
	before := jsonOf(getWorkspace(t, f, "ws"))

	res := stepEdit(t, f, protocol.MethodWorkspacePatch, `{"workspace_id":"ws","revision":1,"patch":[
		{"op":"replace","path":"/name","value":"half"},
		{"op":"test","path":"/start","value":"elsewhere"}]}`)
	is.Equal(res.Status, "invalid")
	is.Equal(codes(res.Diagnostics), []string{"patch_invalid"})
	is.Equal(res.Revision, 1)                           // no revision is used up
	is.True(res.NextActions.RecommendedNextTool != nil) // advice names a method
	is.Equal(jsonOf(getWorkspace(t, f, "ws")), before)  // and nothing, not even the first operation, is stored

	notObject := stepEdit(t, f, protocol.MethodWorkspacePatch, `{"workspace_id":"ws","revision":1,"patch":[{"op":"replace","path":"","value":"text"}]}`)
	is.Equal(codes(notObject.Diagnostics), []string{"draft_not_object"})
	is.Equal(notObject.Revision, 1)
	is.Equal(jsonOf(getWorkspace(t, f, "ws")), before)

	conflictLeavesTheWorkspace(t, f, "ws", protocol.MethodWorkspacePatch, `{"workspace_id":"ws","revision":2,"patch":[]}`)
	refusedWithoutChange(t, f, "ws", protocol.MethodWorkspacePatch,
		map[string]func(error){"not a list": badParams(t), "no patch": badParams(t), "unknown workspace": keyError(t)},
		map[string]string{
			"not a list":        `{"workspace_id":"ws","revision":1,"patch":{"op":"remove","path":"/name"}}`,
			"no patch":          `{"workspace_id":"ws","revision":1}`,
			"unknown workspace": `{"workspace_id":"nope","revision":1,"patch":[]}`,
		})
}

func TestCreateWrapperSavesTheWorkspaceAsAWrapperArtifact(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoWorkspace(t, f)

	res := conforming[protocol.SavedArtifact](t, f, protocol.MethodWorkspaceCreateWrapper,
		`{"workspace_id":"ws","artifact_id":"echo","version":1,"title":"Echo","outcomes":["ok"],"description":"echoes"}`)
	is.Equal(res, protocol.SavedArtifact{ArtifactID: "echo", Version: 1, Saved: true,
		RequiredLogicalSources: []string{"fake.one"}, SuggestedBindings: map[string]string{"fake.one": "fake.one"}})
	a := mustCall[protocol.Artifact](t, f, protocol.MethodArtifactsInspect, `{"artifact_id":"echo","version":1}`)
	is.Equal(a.Kind, "wrapper") // the kind is fixed
	is.Equal(*a.Description, "echoes")

	stepEdit(t, f, protocol.MethodWorkspaceRemoveStep, `{"workspace_id":"ws","revision":1,"step_id":"tool_error"}`)
	unsaved := conforming[protocol.UnsavedArtifact](t, f, protocol.MethodWorkspaceCreateWrapper,
		`{"workspace_id":"ws","artifact_id":"broken","version":1,"title":"Broken","outcomes":["ok"]}`)
	is.True(!unsaved.Saved) // an invalid workspace is not saved
	is.Equal(unsaved.Status, "invalid")
	_, err := f.call(t, protocol.MethodArtifactsInspect, `{"artifact_id":"broken","version":1}`)
	domainError(t, err, "KeyError")

	_, err = f.call(t, protocol.MethodWorkspaceCreateWrapper, `{"workspace_id":"nope","artifact_id":"x","version":1,"title":"X","outcomes":["ok"]}`)
	domainError(t, err, "KeyError")
	_, err = f.call(t, protocol.MethodWorkspaceCreateWrapper, `{"workspace_id":"ws","artifact_id":"x","version":1,"title":"X","outcomes":["ok"],"kind":"workflow"}`)
	invalidParams(t, err) // the kind is not a param
	list := mustCall[protocol.ListArtifactsResult](t, f, protocol.MethodArtifactsList, `{}`)
	is.Equal(list.Total, 1) // only the first wrapper was saved
}

func TestSetContractReplacesTheGivenPartsInOneRevision(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoWorkspace(t, f)

	res := stepEdit(t, f, protocol.MethodWorkspaceSetContract, `{"workspace_id":"ws","revision":1,
		"outcomes":["ok","failed"],"output_schema":{"type":"object","properties":{"message":{"type":"string"},"extra":{}}}}`)
	is.Equal(res.Revision, 2)
	is.Equal(res.Status, "valid")
	is.Equal(res.NextActions.PatchExamples[0].Request["outcomes"], []any{"ok", "failed"}) // the save it suggests declares the new outcomes
	doc := draftOf(t, f, "ws")
	is.Equal(doc["outcomes"], []any{"ok", "failed"})
	is.True(at(doc, "output_schema", "properties", "extra") != nil) // the output schema is replaced whole
	is.Equal(at(doc, "input_schema", "required"), []any{"message"}) // the others stay

	refusedWithoutChange(t, f, "ws", protocol.MethodWorkspaceSetContract,
		map[string]func(error){"nothing": valueError(t), "no outcome": valueError(t), "blank": valueError(t), "twice": valueError(t), "bad schema": valueError(t), "unknown workspace": keyError(t)},
		map[string]string{
			"nothing":           `{"workspace_id":"ws","revision":2}`,
			"no outcome":        `{"workspace_id":"ws","revision":2,"outcomes":[]}`,
			"blank":             `{"workspace_id":"ws","revision":2,"outcomes":["ok"," "]}`,
			"twice":             `{"workspace_id":"ws","revision":2,"outcomes":["ok","ok "]}`,
			"bad schema":        `{"workspace_id":"ws","revision":2,"input_schema":{"type":12}}`,
			"unknown workspace": `{"workspace_id":"nope","revision":2,"outcomes":["ok"]}`,
		})
	conflictLeavesTheWorkspace(t, f, "ws", protocol.MethodWorkspaceSetContract, `{"workspace_id":"ws","revision":1,"outcomes":["ok"]}`)
}

func TestCreateEmptyStoresAContractWithoutSteps(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	res := conforming[protocol.DraftEditResult](t, f, protocol.MethodWorkspaceCreateEmpty,
		`{"workspace_id":"ws","name":"flow","title":"Flow","outcomes":["ok","failed"]}`)
	is.Equal(res.Revision, 1)
	is.Equal(res.Status, "invalid") // no start step yet
	is.Equal(res.Summary.StepCount, 0)
	is.Equal(*res.NextActions.RecommendedNextTool, protocol.MethodWorkspaceAddStepFromCapability)
	doc := draftOf(t, f, "ws")
	is.Equal(doc["outcomes"], []any{"ok", "failed"})
	is.Equal(doc["input_schema"], map[string]any{"type": "object", "properties": map[string]any{}})

	again := conforming[protocol.DraftEditResult](t, f, protocol.MethodWorkspaceCreateEmpty, `{"workspace_id":"ws","name":"other"}`)
	is.Equal(again.Status, "conflict")
	is.Equal(codes(again.Diagnostics), []string{"workspace_exists"})
	is.Equal(draftOf(t, f, "ws")["name"], "flow") // the existing workspace is kept

	_, err := f.call(t, protocol.MethodWorkspaceCreateEmpty, `{"workspace_id":"w2","name":"x","outcomes":[]}`)
	domainError(t, err, "ValueError")
	_, err = f.call(t, protocol.MethodWorkspaceCreateEmpty, `{"workspace_id":"w2","name":"x","state_schema":{"type":"nope"}}`)
	domainError(t, err, "ValueError")
	_, err = f.call(t, protocol.MethodWorkspaceCreateEmpty, `{"workspace_id":"has space","name":"x"}`)
	invalidParams(t, err)
	list := mustCall[protocol.ListWorkspacesResult](t, f, protocol.MethodWorkspaceList, `{}`)
	is.Equal(len(list.Workspaces), 1) // no refused call created one
}

func TestRemoveRouteRemovesOneRouteAndAMissingOneIsANoOp(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoWorkspace(t, f)

	res := stepEdit(t, f, protocol.MethodWorkspaceRemoveRoute, `{"workspace_id":"ws","revision":1,"step_id":"call","outcome":"error"}`)
	is.Equal(res.Revision, 2)
	is.Equal(res.Status, "invalid") // the error outcome is no longer routed
	is.True(hasCode(res.Diagnostics, "missing_outcome_edge"))
	is.Equal(at(draftOf(t, f, "ws"), "routes", "call"), map[string]any{"ok": "__end__"})

	before := jsonOf(getWorkspace(t, f, "ws"))
	for _, params := range []string{
		`{"workspace_id":"ws","revision":2,"step_id":"call","outcome":"error"}`,
		`{"workspace_id":"ws","revision":2,"step_id":"nowhere","outcome":"ok"}`,
	} {
		same := stepEdit(t, f, protocol.MethodWorkspaceRemoveRoute, params)
		is.Equal(same.Revision, 2) // nothing to remove: the revision stays
		is.Equal(jsonOf(getWorkspace(t, f, "ws")), before)
	}
	conflictLeavesTheWorkspace(t, f, "ws", protocol.MethodWorkspaceRemoveRoute, `{"workspace_id":"ws","revision":1,"step_id":"call","outcome":"ok"}`)
	refusedWithoutChange(t, f, "ws", protocol.MethodWorkspaceRemoveRoute,
		map[string]func(error){"unknown workspace": keyError(t)},
		map[string]string{"unknown workspace": `{"workspace_id":"nope","revision":2,"step_id":"call","outcome":"ok"}`})
}

func TestRemoveStepLeavesTheRoutesIntoItDangling(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoWorkspace(t, f)

	res := stepEdit(t, f, protocol.MethodWorkspaceRemoveStep, `{"workspace_id":"ws","revision":1,"step_id":"tool_error"}`)
	is.Equal(res.Revision, 2)
	is.Equal(res.Summary.Steps, []string{"call"})
	is.Equal(res.Status, "invalid") // call.error still names the removed step
	is.True(hasCode(res.Diagnostics, "unknown_edge_destination"))
	doc := draftOf(t, f, "ws")
	is.Equal(at(doc, "routes", "tool_error"), nil)             // its own routes went with it
	is.Equal(at(doc, "routes", "call", "error"), "tool_error") // routes into it stay

	before := jsonOf(getWorkspace(t, f, "ws"))
	same := stepEdit(t, f, protocol.MethodWorkspaceRemoveStep, `{"workspace_id":"ws","revision":2,"step_id":"tool_error"}`)
	is.Equal(same.Revision, 2) // a missing step is a no-op
	is.Equal(jsonOf(getWorkspace(t, f, "ws")), before)
	conflictLeavesTheWorkspace(t, f, "ws", protocol.MethodWorkspaceRemoveStep, `{"workspace_id":"ws","revision":1,"step_id":"call"}`)
}

func TestRemoveBindingDropsTheNamedBindings(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoWorkspace(t, f)

	res := stepEdit(t, f, protocol.MethodWorkspaceRemoveBinding, `{"workspace_id":"ws","revision":1,"step_id":"call","inputs":["message"],"outputs":["message"]}`)
	is.Equal(res.Revision, 2)
	doc := draftOf(t, f, "ws")
	is.Equal(at(doc, "steps", "call", "input"), []any{})
	is.Equal(at(doc, "steps", "call", "output"), []any{})

	same := stepEdit(t, f, protocol.MethodWorkspaceRemoveBinding, `{"workspace_id":"ws","revision":2,"step_id":"call","inputs":["message"]}`)
	is.Equal(same.Revision, 2) // nothing left to remove

	refusedWithoutChange(t, f, "ws", protocol.MethodWorkspaceRemoveBinding,
		map[string]func(error){"none named": valueError(t), "unknown step": keyError(t), "unknown workspace": keyError(t)},
		map[string]string{
			"none named":        `{"workspace_id":"ws","revision":2,"step_id":"call"}`,
			"unknown step":      `{"workspace_id":"ws","revision":2,"step_id":"nope","inputs":["message"]}`,
			"unknown workspace": `{"workspace_id":"nope","revision":2,"step_id":"call","inputs":["message"]}`,
		})
	conflictLeavesTheWorkspace(t, f, "ws", protocol.MethodWorkspaceRemoveBinding, `{"workspace_id":"ws","revision":1,"step_id":"tool_error","inputs":["message"]}`)
}

func TestDocumentEditsAreInTheMethodTable(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	for _, m := range []string{
		protocol.MethodDraftsPatch, protocol.MethodDraftsCreateFromCapability, protocol.MethodWorkspacePatch,
		protocol.MethodWorkspaceCreateWrapper, protocol.MethodWorkspaceSetContract,
		protocol.MethodWorkspaceSetStepInputMap, protocol.MethodWorkspaceSetStepInputBindings,
		protocol.MethodWorkspaceSetStepOutputMap, protocol.MethodWorkspaceSetStepOutputBindings,
		protocol.MethodWorkspaceSetWorkflowOutputMap, protocol.MethodWorkspaceSetWorkflowOutputBindings,
		protocol.MethodWorkspaceRemoveRoute, protocol.MethodWorkspaceRemoveStep, protocol.MethodWorkspaceRemoveBinding,
	} {
		_, ok := f.methods[m]
		if !ok {
			t.Logf("%s is missing", m)
		}
		is.True(ok)                                     // the method is served
		is.True(strings.HasPrefix(m, "workflow.draft")) // under the reference's names
	}
}
