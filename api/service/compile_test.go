package service_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/contract"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// conforming calls a method that must succeed, checks its answer against
// the manifest's result schema and decodes it as a client would.
func conforming[T any](t *testing.T, f *fixture, method, params string) T {
	t.Helper()
	is := is.New(t)
	is.Helper()
	res := f.succeed(t, method, params)
	if err := contract.Default().ValidateResult(method, res); err != nil {
		t.Logf("%s: %s does not match the manifest: %v", method, jsonOf(res), err)
		is.Fail() // the answer matches the manifest's result schema
	}
	var out T
	is.NoErr(json.Unmarshal([]byte(jsonOf(res)), &out)) // the answer decodes
	return out
}

// compiledPlan scaffolds workspace ws from capability and answers its
// compiled plan as a raw JSON object.
func compiledPlan(t *testing.T, f *fixture, ws, capability string) map[string]any {
	t.Helper()
	is := is.New(t)
	is.Helper()
	scaffold(t, f, ws, capability)
	res := generic(t, f.raw(t, protocol.MethodWorkspaceCompile, `{"workspace_id":"`+ws+`"}`))
	plan, ok := res["compiled_plan"].(map[string]any)
	is.True(ok) // a valid workspace compiles
	return plan
}

// createFromPlan calls create_from_plan for artifact id version 1 with
// outcomes ["ok"], plan and any extra params (a JSON fragment starting
// with a comma).
func createFromPlan(t *testing.T, f *fixture, id string, plan any, extra string) (any, error) {
	t.Helper()
	return f.call(t, protocol.MethodArtifactsCreateFromPlan,
		`{"artifact_id":"`+id+`","version":1,"title":"T","outcomes":["ok"],"plan":`+jsonOf(plan)+extra+`}`)
}

// nodeUses maps each node id of a plan to the capability it calls.
func nodeUses(plan workflow.Plan) map[string]string {
	uses := map[string]string{}
	for _, n := range plan.Nodes {
		uses[n.ID] = n.Node
	}
	return uses
}

// unreachableDraft is a valid draft with one step no route reaches: a
// warning, not an error.
func unreachableDraft() map[string]any {
	return map[string]any{
		"name": "warned", "start": "call",
		"input_schema": obj("type", "object"), "state_schema": obj("type", "object"), "output_schema": obj("type", "object"),
		"steps": map[string]any{
			"call":   map[string]any{"use": "fake.one.counter"},
			"orphan": map[string]any{"end": map[string]any{}},
		},
		"routes": map[string]any{"call": map[string]any{"ok": "__end__", "error": "__end__"}},
	}
}

func TestCompileWorkspaceAnswersThePlanAndItsRequirementsAndChangesNothing(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws-echo", "fake.one.echo")
	before := getWorkspace(t, f, "ws-echo")

	res := conforming[protocol.CompileWorkspaceResult](t, f, protocol.MethodWorkspaceCompile, `{"workspace_id":"ws-echo"}`)
	is.Equal(res.Status, "") // the success shape has no status
	is.True(res.CompiledPlan != nil)
	is.Equal(planOf(t, res.CompiledPlan).Start, "call")
	is.Equal(nodeUses(planOf(t, res.CompiledPlan)), map[string]string{"call": "fake.one.echo", "tool_error": "wf.std.runtime_error"})
	is.Equal(len(res.RequiredCapabilities), 1) // built-ins are not requirements
	req, ok := res.RequiredCapabilities["fake.one.echo"]
	is.True(ok) // keyed by the capability's name
	is.Equal(req.Kind, "node_spec")
	inHash, err := catalog.SchemaHash(echoTool().InputSchema)
	is.NoErr(err)
	is.Equal(*req.InputSchemaHash, inHash) // observed in the live catalog
	is.Equal(*req.ObservedConcreteSource, "fake.one")

	is.Equal(jsonOf(getWorkspace(t, f, "ws-echo")), jsonOf(before)) // compiling changes nothing

	saveArtifact(t, f, "ws-echo", "echo", "")
	a := mustCall[protocol.Artifact](t, f, protocol.MethodArtifactsInspect, `{"artifact_id":"echo","version":1}`)
	is.Equal(jsonOf(a.Plan), jsonOf(res.CompiledPlan)) // the plan create_artifact saves
}

func TestCompileAnInvalidWorkspaceAnswersItsDiagnostics(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws-1", "fake.one.echo")
	mustCall[protocol.WorkspaceResult](t, f, protocol.MethodWorkspaceSetRoute,
		`{"workspace_id":"ws-1","revision":1,"step_id":"call","outcome":"ok","target":"nowhere"}`)
	before := getWorkspace(t, f, "ws-1")

	res := conforming[protocol.CompileWorkspaceResult](t, f, protocol.MethodWorkspaceCompile, `{"workspace_id":"ws-1"}`)
	is.Equal(res.Status, "invalid")
	is.True(res.CompiledPlan == nil)                              // no plan
	is.True(res.RequiredCapabilities == nil)                      // and no requirements
	is.True(hasCode(res.Diagnostics, "unknown_edge_destination")) // the diagnostics say why
	is.Equal(jsonOf(getWorkspace(t, f, "ws-1")), jsonOf(before))  // nothing changes
	_, err := f.call(t, protocol.MethodWorkspaceCompile, `{"workspace_id":"nope"}`)
	domainError(t, err, "KeyError") // an unknown workspace
	_, err = f.call(t, protocol.MethodWorkspaceCompile, `{"workspace_id":"ws-1","revision":1}`)
	invalidParams(t, err) // unknown params
}

func TestValidateDraftAnswersTheCompiledPlanOfAValidDraft(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws-1", "fake.one.echo")
	draft := getWorkspace(t, f, "ws-1").Draft

	res := conforming[protocol.ValidateDraftResult](t, f, protocol.MethodDraftsValidate, `{"draft":`+jsonOf(draft)+`}`)
	is.Equal(res.Status, "valid")
	is.Equal(res.Diagnostics, []protocol.Diagnostic{}) // an empty list, not null
	is.True(res.CompiledPlan != nil)
	is.Equal(nodeUses(planOf(t, res.CompiledPlan))["call"], "fake.one.echo")

	compiled := mustCall[protocol.CompileWorkspaceResult](t, f, protocol.MethodWorkspaceCompile, `{"workspace_id":"ws-1"}`)
	is.Equal(jsonOf(res.CompiledPlan), jsonOf(compiled.CompiledPlan)) // the same plan the workspace compiles to
}

func TestValidateDraftKeepsWarningsButStaysValid(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	res := conforming[protocol.ValidateDraftResult](t, f, protocol.MethodDraftsValidate, `{"draft":`+jsonOf(unreachableDraft())+`}`)
	is.Equal(res.Status, "valid")                                                         // a warning does not block
	is.Equal(codes(res.Diagnostics), []string{"error_routed_to_end", "unreachable_step"}) // but is reported
	is.Equal(res.Diagnostics[0].Severity, "warning")
	is.Equal(res.Diagnostics[0].Path, "routes.call.error") // the error that ends the run ok
	is.Equal(res.Diagnostics[1].Severity, "warning")
	is.True(res.CompiledPlan != nil)
}

func TestValidateDraftReportsParseAndValidationFindings(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	draft := unreachableDraft()
	draft["steps"].(map[string]any)["bad"] = map[string]any{"use": "fake.one.echo", "colour": "red"} // parse: an unknown key
	draft["routes"].(map[string]any)["call"] = map[string]any{"ok": "nowhere", "error": "__end__"}   // validation: an unknown target

	res := conforming[protocol.ValidateDraftResult](t, f, protocol.MethodDraftsValidate, `{"draft":`+jsonOf(draft)+`}`)
	is.Equal(res.Status, "invalid")
	is.True(res.CompiledPlan == nil)
	is.True(hasCode(res.Diagnostics, "draft_invalid"))            // the parse finding
	is.True(hasCode(res.Diagnostics, "unknown_edge_destination")) // and the validation finding
	is.True(hasCode(res.Diagnostics, "unreachable_step"))         // warnings come along

	malformed := conforming[protocol.ValidateDraftResult](t, f, protocol.MethodDraftsValidate, `{"draft":{"name":42}}`)
	is.Equal(malformed.Status, "invalid")
	is.Equal(codes(malformed.Diagnostics), []string{"draft_invalid"}) // the document itself

	_, err := f.call(t, protocol.MethodDraftsValidate, `{}`)
	invalidParams(t, err) // no draft
	_, err = f.call(t, protocol.MethodDraftsValidate, `{"draft":{},"workspace_id":"ws-1"}`)
	invalidParams(t, err) // unknown params
	_, err = f.call(t, protocol.MethodDraftsValidate, `{"draft":[]}`)
	invalidParams(t, err) // not an object
}

func TestCreateFromPlanRewritesBoundSourcesAndSaves(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	f.svc.Now = ticking() // every save observes the catalog at a later time
	plan := compiledPlan(t, f, "ws-1", "fake.one.counter")

	res, err := createFromPlan(t, f, "a1", plan, `,"kind":"wrapper","description":"counts","source_bindings":{"counter_src":"fake.one"}`)
	is.NoErr(err)
	is.NoErr(contract.Default().ValidateResult(protocol.MethodArtifactsCreateFromPlan, res)) // a SaveArtifactResult
	is.Equal(res, protocol.SaveArtifactResult{ArtifactID: "a1", Version: 1, Saved: true})

	a := mustCall[protocol.Artifact](t, f, protocol.MethodArtifactsInspect, `{"artifact_id":"a1","version":1}`)
	is.Equal(a.Kind, "wrapper")
	is.Equal(*a.Description, "counts")
	is.Equal(a.Outcomes, []string{"ok"})
	is.Equal(nodeUses(planOf(t, a.Plan)), map[string]string{"call": "counter_src.counter", "tool_error": "wf.std.runtime_error"}) // the logical source
	is.Equal(len(a.RequiredCapabilities), 1)
	req := a.RequiredCapabilities[0]
	is.Equal(req.Ref.Source, "counter_src")
	is.Equal(req.Ref.CapabilityKey, "counter")
	is.Equal(*req.ObservedConcreteSource, "fake.one") // observed through the binding
	is.True(req.OutputSchemaHash != nil)

	again, err := createFromPlan(t, f, "a1", plan, `,"kind":"wrapper","description":"counts","source_bindings":{"counter_src":"fake.one"}`)
	is.NoErr(err)
	is.Equal(again, protocol.SaveArtifactResult{ArtifactID: "a1", Version: 1, Saved: true})                                             // the same content again is accepted
	is.Equal(jsonOf(mustCall[protocol.Artifact](t, f, protocol.MethodArtifactsInspect, `{"artifact_id":"a1","version":1}`)), jsonOf(a)) // and changes nothing

	_, err = createFromPlan(t, f, "a1", plan, "")
	msg := domainError(t, err, "ValueError") // other content under a saved version
	is.True(strings.Contains(msg, "immutable"))

	logical := mustCall[protocol.Artifact](t, f, protocol.MethodArtifactsInspect, `{"artifact_id":"a1","version":1}`).Plan
	res, err = createFromPlan(t, f, "a2", logical, `,"source_bindings":{"counter_src":"fake.one"}`)
	is.NoErr(err) // a plan that already names the logical source validates through the binding
	is.Equal(res.(protocol.SaveArtifactResult).ArtifactID, "a2")
}

func TestCreateFromPlanDefaultsOutcomesAndAcceptsWarnings(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	plan := compiledPlan(t, f, "ws-1", "fake.one.echo")
	delete(plan, "outcomes") // a legacy plan: outcomes default to ["ok"]
	delete(plan, "output")
	plan["nodes"] = append(plan["nodes"].([]any), map[string]any{"id": "orphan", "type": "end", "outcome": "ok"}) // unreachable: a warning

	_, err := createFromPlan(t, f, "a1", plan, "")
	is.NoErr(err)
	a := mustCall[protocol.Artifact](t, f, protocol.MethodArtifactsInspect, `{"artifact_id":"a1","version":1}`)
	is.Equal(planOf(t, a.Plan).Outcomes, []string{"ok"})
	is.Equal(a.Kind, "workflow") // the default kind
	is.Equal(len(planOf(t, a.Plan).Nodes), 3)
}

func TestEveryValidatedPlanCanBeSavedEvenWithoutSchemas(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	draft := unreachableDraft()
	for _, k := range []string{"input_schema", "state_schema", "output_schema"} {
		delete(draft, k)
	}
	res := generic(t, f.raw(t, protocol.MethodDraftsValidate, `{"draft":`+jsonOf(draft)+`}`))
	is.Equal(res["status"], "valid")
	plan := res["compiled_plan"].(map[string]any)
	is.Equal(plan["input_schema"], nil) // compiled as null

	_, err := createFromPlan(t, f, "a1", plan, "")
	is.NoErr(err) // null schemas are accepted
	a := mustCall[protocol.Artifact](t, f, protocol.MethodArtifactsInspect, `{"artifact_id":"a1","version":1}`)
	is.Equal(a.InputSchema, map[string]any{}) // the artifact's own schemas are objects

	plan["nodes"] = nil
	_, err = createFromPlan(t, f, "a2", plan, "")
	invalidParams(t, err) // but nodes may not be null
}

func TestCreateFromPlanRefusesAnInvalidPlanWithItsFirstDiagnostic(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	plan := compiledPlan(t, f, "ws-1", "fake.one.echo")

	unknown := clonePlan(t, plan)
	unknown["nodes"].([]any)[0].(map[string]any)["node"] = "fake.one.nope"
	_, err := createFromPlan(t, f, "a1", unknown, "")
	msg := domainError(t, err, "ValueError")
	is.True(strings.Contains(msg, "unknown_node_def")) // the first diagnostic's code
	is.True(strings.Contains(msg, "fake.one.nope"))    // and its message

	noStart := clonePlan(t, plan)
	noStart["start"] = "missing"
	_, err = createFromPlan(t, f, "a1", noStart, "")
	msg = domainError(t, err, "ValueError")
	is.True(strings.Contains(msg, "unknown_start"))

	dangling := clonePlan(t, plan)
	dangling["edges"] = append(dangling["edges"].([]any), map[string]any{"from": "call", "outcome": "ok", "to": "nowhere"})
	_, err = createFromPlan(t, f, "a1", dangling, "")
	domainError(t, err, "ValueError")

	unbound := clonePlan(t, plan)
	unbound["nodes"].([]any)[0].(map[string]any)["node"] = "echo_src.echo"
	_, err = createFromPlan(t, f, "a1", unbound, "")
	msg = domainError(t, err, "ValueError") // a logical source needs a binding to be checked
	is.True(strings.Contains(msg, "unknown_node_def"))

	_, err = f.call(t, protocol.MethodArtifactsCreateFromPlan, `{"artifact_id":"a1","version":1,"title":"T","outcomes":["done"],"plan":`+jsonOf(plan)+`}`)
	msg = domainError(t, err, "ValueError") // outcomes are checked as create_artifact checks them
	is.True(strings.Contains(msg, `"ok"`))
	_, err = f.call(t, protocol.MethodArtifactsInspect, `{"artifact_id":"a1","version":1}`)
	domainError(t, err, "KeyError") // no refused plan was saved
}

func TestCreateFromPlanRejectsMalformedParams(t *testing.T) {
	f := newFixture(t)
	plan := compiledPlan(t, f, "ws-1", "fake.one.echo")

	for _, key := range []string{"name", "start", "nodes", "edges", "input_schema", "state_schema", "output_schema"} {
		missing := clonePlan(t, plan)
		delete(missing, key)
		_, err := createFromPlan(t, f, "a1", missing, "")
		invalidParams(t, err) // a required plan key
	}
	extra := clonePlan(t, plan)
	extra["node_defs"] = []any{}
	_, err := createFromPlan(t, f, "a1", extra, "")
	invalidParams(t, err) // an unknown plan key
	nodeKey := clonePlan(t, plan)
	nodeKey["nodes"].([]any)[0].(map[string]any)["in_map"] = map[string]any{}
	_, err = createFromPlan(t, f, "a1", nodeKey, "")
	invalidParams(t, err) // an unknown node key
	wrongType := clonePlan(t, plan)
	wrongType["nodes"] = "call"
	_, err = createFromPlan(t, f, "a1", wrongType, "")
	invalidParams(t, err) // a key of the wrong type

	_, err = createFromPlan(t, f, "bad id", plan, "")
	invalidParams(t, err) // artifact ids are record ids
	_, err = createFromPlan(t, f, "a1", plan, `,"kind":"job"`)
	invalidParams(t, err)
	_, err = createFromPlan(t, f, "a1", plan, `,"workspace_id":"ws-1"`)
	invalidParams(t, err) // unknown params
	_, err = createFromPlan(t, f, "a1", []any{}, "")
	invalidParams(t, err) // a plan is an object
	_, err = f.call(t, protocol.MethodArtifactsCreateFromPlan, `{"artifact_id":"a1","version":0,"title":"T","outcomes":["ok"],"plan":`+jsonOf(plan)+`}`)
	invalidParams(t, err)
	_, err = f.call(t, protocol.MethodArtifactsCreateFromPlan, `{"artifact_id":"a1","version":1,"title":"T","outcomes":["ok"]}`)
	invalidParams(t, err) // no plan
}

// clonePlan deep-copies a raw plan.
func clonePlan(t *testing.T, plan map[string]any) map[string]any {
	t.Helper()
	return generic(t, []byte(jsonOf(plan)))
}

// planOf decodes a compiled plan the API answered (the workflow
// language's JSON, carried unread).
func planOf(t *testing.T, raw protocol.Plan) workflow.Plan {
	t.Helper()
	is := is.New(t)
	is.Helper()
	var p workflow.Plan
	is.NoErr(json.Unmarshal(raw, &p)) // the plan decodes
	return p
}
