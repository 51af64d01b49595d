package mcpface

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/contract"
	mfrpc "github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// aliases are draft methods that are another one under a second name
// (the same handler, params and result): an authoring tool reaches them
// through their twin.
var aliases = map[string]string{
	protocol.MethodDraftsCreateFromCapability: protocol.MethodWorkspaceFromCapability,
}

// authoringMethods are the methods some operation of some authoring tool
// calls.
func authoringMethods() []string {
	var out []string
	for _, t := range authoring {
		for _, methods := range t.methods() {
			out = append(out, methods...)
		}
	}
	return out
}

// Every draft method of the manifest (workflow.draft_workspaces.* and
// workflow.drafts.*) is reachable from some authoring tool, and every
// method a tool calls is the manifest's.
func TestEveryDraftMethodIsReachableFromAnAuthoringTool(t *testing.T) {
	is := is.New(t)
	var manifest struct {
		Operations []struct {
			Method string `json:"method"`
		} `json:"operations"`
	}
	is.NoErr(json.Unmarshal(contract.Manifest(), &manifest))
	reached := authoringMethods()
	drafts := 0
	for _, op := range manifest.Operations {
		if !strings.HasPrefix(op.Method, "workflow.draft_workspaces.") && !strings.HasPrefix(op.Method, "workflow.drafts.") {
			continue
		}
		drafts++
		m := op.Method
		if twin, ok := aliases[m]; ok {
			m = twin
		}
		if !slices.Contains(reached, m) {
			t.Logf("no authoring tool calls %s", op.Method)
		}
		is.True(slices.Contains(reached, m)) // the draft method is reachable
	}
	is.Equal(drafts, 33) // the manifest's draft methods, all walked
	for _, m := range reached {
		is.True(contract.Default().Has(m)) // a tool calls a method of the manifest
	}
	for _, m := range []string{protocol.MethodCapabilitiesList, protocol.MethodCapabilitiesInspect, protocol.MethodDeploymentsSave} {
		is.True(slices.Contains(reached, m)) // search, inspect and deploy too
	}
}

// paramsOf makes the params the tool's op makes of args, and the method
// it calls, as the handler does.
func paramsOf(t *testing.T, tool string, args map[string]any) (string, arguments) {
	t.Helper()
	is := is.New(t)
	i := slices.IndexFunc(authoring, func(a authoringTool) bool { return a.name == tool })
	is.True(i >= 0) // an authoring tool
	var a arguments
	is.NoErr(json.Unmarshal(mustJSON(args), &a))
	o, ok := authoring[i].op(a.str("op"))
	is.True(ok) // an operation of the tool
	v := o.variant(a)
	if v.params == nil {
		return v.method, a.without("op")
	}
	params, err := v.params(a)
	is.NoErr(err)
	return v.method, params
}

// validParams checks that params are valid params of method by the
// manifest: what /ws would accept.
func validParams(t *testing.T, method string, params arguments) {
	t.Helper()
	err := contract.Default().ValidateParams(method, mustJSON(params))
	if err != nil {
		t.Logf("%s %s: %v", method, mustJSON(params), err)
	}
	is.New(t).NoErr(err) // the contract takes the params
}

// The step tool adds and updates a step of each of the nine kinds, with
// params the contract takes, through the method for the kind.
func TestTheStepToolAddsAndUpdatesEachOfTheNineKinds(t *testing.T) {
	is := is.New(t)
	specs := map[string]string{
		"use":       `{"capability_name":"demo.default.echo","input_bindings":[{"target":"message","path":"context.tag"}],"bind_outputs":{"message":"state.echoes"},"retry":1}`,
		"when":      `{"if":{"op":"eq","left":{"path":"input.urgent"},"right":{"value":true}},"then":"ask","otherwise":"__end__"}`,
		"choose":    `{"clauses":[{"if":{"op":"exists","path":"input.email"},"then":"by_email"}],"default":"by_hand"}`,
		"match":     `{"value":"input.kind","cases":[{"equals":"bug","then":"fix"}],"default":"__end__"}`,
		"foreach":   `{"over":"input.tags","as":"tag"}`,
		"join":      `{}`,
		"end":       `{"outcome":"rejected"}`,
		"interrupt": `{"kind":"approval","request":[{"target":"message","value":"Ship it?"}],"resume":[{"source":"approved","target":"state.approved"}],"resume_schema":{"type":"object"}}`,
		"subgraph":  `{"workflow":{"artifact_id":"child","version":1},"input":[{"target":"text","path":"input.notes"}],"output":[]}`,
	}
	is.Equal(len(specs), len(stepKinds)) // every kind
	for _, kind := range stepKinds {
		var spec map[string]any
		is.NoErr(json.Unmarshal([]byte(specs[kind.(string)]), &spec))
		method, params := paramsOf(t, toolDraftStep, map[string]any{"op": "add", "workspace_id": "w", "revision": 3, "step_id": "s", "kind": kind,
			"spec": spec, "routes": map[string]any{"ok": "__end__"}, "after": map[string]any{"step_id": "before", "outcome": "ok"}})
		if kind == "use" {
			is.Equal(method, protocol.MethodWorkspaceAddStepFromCapability) // a use step from its capability, as the CLI adds it
			is.Equal(params.str("route_from_step"), "before")
		} else {
			is.Equal(method, protocol.MethodWorkspaceAddStep)
			is.Equal(string(params["step"]), string(mustJSON(map[string]any{kind.(string): spec}))) // the step is {kind: spec}
		}
		validParams(t, method, params)

		update := spec
		if kind == "use" {
			update = map[string]any{"retry": 2, "input": []any{map[string]any{"target": "message", "value": "hi"}}}
		}
		method, params = paramsOf(t, toolDraftStep, map[string]any{"op": "update", "workspace_id": "w", "revision": 4, "step_id": "s/1", "kind": kind, "spec": update})
		if kind == "use" {
			is.Equal(method, protocol.MethodWorkspaceUpdateCapabilityStep)
		} else {
			is.Equal(method, protocol.MethodWorkspacePatch) // replaced by a patch the server applies and checks
			is.True(strings.Contains(string(params["patch"]), `"path":"/steps/s~11"`))
		}
		validParams(t, method, params)
	}
	method, params := paramsOf(t, toolDraftStep, map[string]any{"op": "remove", "workspace_id": "w", "revision": 5, "step_id": "s"})
	is.Equal(method, protocol.MethodWorkspaceRemoveStep)
	validParams(t, method, params)
}

// The arguments pick the method of an operation that has two, and the
// params are the method's.
func TestTheArgumentsPickTheMethod(t *testing.T) {
	is := is.New(t)
	for _, tc := range []struct {
		tool   string
		args   map[string]any
		method string
	}{
		{toolDraft, map[string]any{"op": "create", "workspace_id": "w", "name": "n"}, protocol.MethodWorkspaceCreateEmpty},
		{toolDraft, map[string]any{"op": "create", "workspace_id": "w", "capability_name": "demo.default.echo"}, protocol.MethodWorkspaceFromCapability},
		{toolDraft, map[string]any{"op": "validate", "workspace_id": "w"}, protocol.MethodWorkspaceValidate},
		{toolDraft, map[string]any{"op": "validate", "draft": map[string]any{"name": "n"}}, protocol.MethodDraftsValidate},
		{toolDraft, map[string]any{"op": "patch", "draft": map[string]any{"name": "n"}, "patch": []any{}}, protocol.MethodDraftsPatch},
		{toolDraft, map[string]any{"op": "patch", "workspace_id": "w", "revision": 1, "patch": []any{}}, protocol.MethodWorkspacePatch},
		{toolDraftBind, map[string]any{"op": "inputs", "workspace_id": "w", "revision": 1, "step_id": "s", "input_map": map[string]any{"input.x": "x"}}, protocol.MethodWorkspaceSetStepInputMap},
		{toolDraftBind, map[string]any{"op": "inputs", "workspace_id": "w", "revision": 1, "step_id": "s", "bindings": []any{}}, protocol.MethodWorkspaceSetStepInputBindings},
		{toolDraftBind, map[string]any{"op": "workflow_output", "workspace_id": "w", "revision": 1, "bindings": []any{}}, protocol.MethodWorkspaceSetWorkflowOutputBindings},
		{toolDraftRoute, map[string]any{"op": "handle", "workspace_id": "w", "revision": 1, "branches": []any{map[string]any{"step_id": "a", "outcome": "error"}}, "target": "__end__"}, protocol.MethodWorkspaceHandle},
		{toolPublish, map[string]any{"op": "wrapper", "workspace_id": "w", "artifact_id": "a", "version": 1, "title": "A", "outcomes": []any{"ok"}}, protocol.MethodWorkspaceCreateWrapper},
		{toolSearchCapabilities, map[string]any{"op": "reducers"}, protocol.MethodSourcesInspect},
	} {
		method, params := paramsOf(t, tc.tool, tc.args)
		is.Equal(method, tc.method)
		validParams(t, method, params)
	}
}

// deploy makes the deployment `mcpflow deploy` makes of its flags.
func TestDeployMakesADeploymentOfItsArguments(t *testing.T) {
	is := is.New(t)
	method, params := paramsOf(t, toolPublish, map[string]any{"op": "deploy", "artifact_id": "triage", "artifact_version": 2,
		"bindings": map[string]any{"demo.default": "demo.default"}})
	is.Equal(method, protocol.MethodDeploymentsSave)
	is.Equal(string(params["deployment"]), `{"artifact_id":"triage","artifact_version":2,"bindings":[{"logical_source":"demo.default","concrete_source":"demo.default"}],"id":"triage.default"}`)
	validParams(t, method, params)
}

// An argument an operation does not take is refused, not dropped.
func TestAnArgumentAnOperationDoesNotTakeIsRefused(t *testing.T) {
	is := is.New(t)
	var a arguments
	is.NoErr(json.Unmarshal([]byte(`{"op":"update","kind":"when","step_id":"s","routes":{"true":"x"}}`), &a))
	_, err := replaceStepParams(a)
	is.True(err != nil && strings.Contains(err.Error(), "update does not take routes"))
	is.NoErr(json.Unmarshal([]byte(`{"op":"add","kind":"nope","step_id":"s"}`), &a))
	_, err = addStepParams(a)
	is.True(err != nil && strings.Contains(err.Error(), "kind must be one of"))
}

// onlyMethods is a Gate that permits the methods listed.
type onlyMethods []string

func (g onlyMethods) Permits(method string) error {
	if slices.Contains(g, method) {
		return nil
	}
	return mfrpc.Errorf(mfrpc.Forbidden, "forbidden: %s", method)
}

// A tool of several operations is listed where one of them may be
// called: a token that may read sees the draft tool (get, validate) and
// search, not the edits; one that may only author sees the edits.
func TestAnAuthoringToolIsListedWhereOneOfItsOperationsMayBeCalled(t *testing.T) {
	is := is.New(t)
	f := &Face{}
	reads := onlyMethods{protocol.MethodWorkspaceGet, protocol.MethodWorkspaceList, protocol.MethodWorkspaceValidate, protocol.MethodDraftsValidate,
		protocol.MethodWorkspaceCompile, protocol.MethodCapabilitiesList, protocol.MethodCapabilitiesInspect, protocol.MethodSourcesInspect}
	var authors onlyMethods
	for _, m := range authoringMethods() {
		if !slices.Contains(reads, m) {
			authors = append(authors, m)
		}
	}
	listed := func(g Gate) []string {
		s := &served{gate: g}
		var out []string
		for _, c := range f.authoringTools(s) {
			if s.refusalOf(c.toolEntry) == nil {
				out = append(out, c.tool.Name)
			}
		}
		return out
	}
	is.Equal(listed(reads), []string{toolSearchCapabilities, toolDraft})
	is.Equal(listed(authors), []string{toolDraft, toolDraftStep, toolDraftBind, toolDraftRoute, toolPublish})
	is.Equal(listed(onlyMethods{}), []string(nil))
	all := f.authoringTools(&served{gate: onlyMethods{}})[2]
	is.True(strings.Contains((&served{gate: onlyMethods{}}).refusalOf(all.toolEntry).Error(), protocol.MethodWorkspaceAddStepFromCapability)) // refused as its first method is
}

// escaped finds JSON's escapes in text meant to be read.
var escaped = regexp.MustCompile(`\\[n"u]`)

// An edit's result says, as text, the revision and status, each
// diagnostic with its repair hint and the tool that makes the repair, and
// the next call as a tool of the face with its arguments; the
// structuredContent is the result with that next_call.
func TestAnEditsResultSaysItsDiagnosticsHintsAndNextCall(t *testing.T) {
	is := is.New(t)
	hint := workflow.DiagnosticCodes[slices.IndexFunc(workflow.DiagnosticCodes, func(c workflow.CodeInfo) bool { return c.Code == "required_input_unbound" })].Repair
	res := protocol.DraftEditResult{
		WorkspaceResult: protocol.WorkspaceResult{WorkspaceID: "triage", Revision: 6, Status: "invalid",
			Summary: protocol.WorkspaceSummary{Name: "triage", Start: "each", Steps: []string{"ask", "each", "say"}},
			Diagnostics: []protocol.Diagnostic{
				{Code: "missing_outcome_edge", Path: "steps.ask", Message: `outcome "submitted" of step "ask" has no route`, RepairHint: ptr("Route that outcome to a step, or to __end__.")},
				{Code: "required_input_unbound", Path: "steps.say.input", Message: `step "say" does not fill "message"`, RepairHint: &hint},
			}},
		NextActions: protocol.NextActions{RecommendedNextTool: ptr(protocol.MethodWorkspaceBranch), Reason: "Route the outcome with branch.",
			PatchExamples: []protocol.PatchExample{{Tool: protocol.MethodWorkspaceBranch,
				Request: protocol.Object{"workspace_id": "triage", "revision": 6, "step_id": "ask", "routes": protocol.Object{"submitted": "__end__"}}}}},
	}
	got := authoredResult(mustJSON(res))
	is.True(!got.IsError) // an invalid draft is an answer, not a failure
	text := got.Content[0].(*mcp.TextContent).Text
	t.Log(text)
	is.True(strings.Contains(text, "workspace triage: revision 6, status invalid"))
	is.True(strings.Contains(text, "- error missing_outcome_edge at steps.ask: outcome \"submitted\" of step \"ask\" has no route\n  hint: Route that outcome"))
	is.True(strings.Contains(text, "hint: Bind it: mcpflow draft bind"))            // the CLI's hint
	is.True(strings.Contains(text, "with these tools: mcpflow_draft_bind op bind")) // and the tool that does it
	is.True(strings.Contains(text, `next: mcpflow_draft_route {"op":"branch","revision":6,"routes":{"submitted":"__end__"},"step_id":"ask","workspace_id":"triage"}`))
	is.True(!escaped.MatchString(strings.ReplaceAll(text, `\"`, ""))) // readable: no escaped newline or unicode
	var structured struct {
		Status   string   `json:"status"`
		NextCall nextCall `json:"next_call"`
	}
	is.NoErr(json.Unmarshal(got.StructuredContent.(json.RawMessage), &structured))
	is.Equal(structured.Status, "invalid")
	is.Equal(structured.NextCall.Tool, toolDraftRoute)
	is.Equal(structured.NextCall.Arguments["op"], "branch")
}

// A saved artifact's result gives the deploy call; one not saved is a
// tool error with the diagnostics.
func TestASavesResultGivesTheDeployCall(t *testing.T) {
	is := is.New(t)
	got := authoredResult(mustJSON(protocol.CreateArtifactResult{SavedArtifact: protocol.SavedArtifact{ArtifactID: "triage", Version: 2, Saved: true,
		RequiredLogicalSources: []string{"demo.default"}, SuggestedBindings: map[string]string{"demo.default": "demo.default"}}}))
	text := got.Content[0].(*mcp.TextContent).Text
	is.True(strings.Contains(text, "Saved artifact triage v2. It needs the sources demo.default"))
	is.True(strings.Contains(text, `next: mcpflow_publish {"artifact_id":"triage","artifact_version":2,"bindings":{"demo.default":"demo.default"},"op":"deploy"}`))

	got = authoredResult(mustJSON(protocol.UnsavedArtifact{WorkspaceID: "triage", Revision: 3, Status: "invalid",
		Diagnostics: []protocol.Diagnostic{{Code: "unknown_start", Path: "start", Message: "start is not a step"}}}))
	is.True(got.IsError) // not saved
	is.True(strings.Contains(got.Content[0].(*mcp.TextContent).Text, "Not saved: workspace triage (revision 3) is invalid.\n"))

	got = authoredResult(mustJSON(protocol.SaveDeploymentResult{DeploymentID: "triage.default", ArtifactID: "triage", ArtifactVersion: 2, Saved: true}))
	text = got.Content[0].(*mcp.TextContent).Text
	is.True(strings.Contains(text, "Deployed triage.default (artifact triage v2). It is offered as a tool of this server, triage"))
	is.True(!strings.Contains(text, "next:")) // deployed: nothing more to do
}

// Each CLI command a repair hint names has the tool that does the same.
func TestEveryCommandARepairHintNamesHasItsTool(t *testing.T) {
	is := is.New(t)
	command := regexp.MustCompile(`mcpflow [a-z]+ [a-z]+`)
	for _, c := range workflow.DiagnosticCodes {
		for _, cmd := range command.FindAllString(c.Repair, -1) {
			covered := slices.ContainsFunc(toolHints, func(h struct{ command, tools string }) bool { return strings.HasPrefix(h.command, cmd) })
			if !covered {
				t.Logf("%s: no tool for %q", c.Code, cmd)
			}
			is.True(covered) // the hint's command has its tool
		}
	}
}

func ptr[T any](v T) *T { return &v }
