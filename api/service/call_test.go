package service_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/protocol"
)

func callCap(t *testing.T, f *fixture, params string) protocol.CapabilityCallResult {
	t.Helper()
	return conforming[protocol.CapabilityCallResult](t, f, protocol.MethodCapabilitiesCall, params)
}

func storedRunCount(t *testing.T, f *fixture) int {
	t.Helper()
	return mustCall[protocol.ListRunsResult](t, f, protocol.MethodRunsList, `{}`).Total
}

// failedCallMessage asserts res is the reference's answer to a failed call and
// returns its diagnostic's message.
func failedCallMessage(t *testing.T, res protocol.CapabilityCallResult) string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	is.Equal(res.Outcome, "runtime_error")
	is.True(res.Output == nil)
	is.Equal(len(res.Diagnostics), 1)
	is.Equal(res.Diagnostics[0].Code, "capability_call_failed")
	is.Equal(res.Diagnostics[0].Severity, "error")
	return res.Diagnostics[0].Message
}

func TestCallingABuiltinRunsItInPlaceWithoutARun(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	res := callCap(t, f, `{"qualified_name":"wf.std.constant","payload":{"value":{"n":[1,2]}},"deployment_id":"ignored"}`)
	is.Equal(res.QualifiedName, "wf.std.constant")
	is.Equal(res.SourceID, "wf.std")
	is.Equal(res.Kind, "node_spec")
	is.True(res.DeploymentID == nil) // a node spec is called outside any deployment
	is.Equal(res.Outcome, "ok")
	is.Equal(res.Output, protocol.Object{"value": map[string]any{"n": []any{float64(1), float64(2)}}})
	is.Equal(len(res.Diagnostics), 0)

	routed := callCap(t, f, `{"qualified_name":"wf.std.truthy","payload":{"value":0}}`)
	is.Equal(routed.Outcome, "falsey") // the capability's own outcome
	is.Equal(routed.Output, protocol.Object{"value": false})
	is.Equal(storedRunCount(t, f), 0) // direct calls create no run record
}

func TestAFailingCallIsARuntimeErrorResult(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	msg := failedCallMessage(t, callCap(t, f, `{"qualified_name":"wf.std.runtime_error","payload":{"message":"boom"}}`))
	is.True(strings.Contains(msg, "boom")) // the failure says why

	msg = failedCallMessage(t, callCap(t, f, `{"qualified_name":"wf.std.constant"}`))
	is.True(strings.Contains(msg, "input schema")) // no payload is {}, which lacks value

	msg = failedCallMessage(t, callCap(t, f, `{"qualified_name":"fake.one.echo","payload":{"message":5}}`))
	is.True(strings.Contains(msg, "input schema")) // checked before the upstream is called
	is.Equal(storedRunCount(t, f), 0)
}

func TestCallingAToolUsesTheSessionRunsUse(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	counterDeployment(t, f)

	first := callCap(t, f, `{"qualified_name":"fake.one.counter"}`)
	is.Equal(first.SourceID, "fake.one")
	is.Equal(first.Outcome, "ok")
	is.Equal(first.Output, protocol.Object{"count": float64(1)})
	run := startRun(t, f, `{"deployment_id":"count"}`)
	is.Equal(run.Output, protocol.Object{"count": float64(2)}) // the run continues the session the call opened
	third := callCap(t, f, `{"qualified_name":"fake.one.counter"}`)
	is.Equal(third.Output, protocol.Object{"count": float64(3)})
	is.Equal(storedRunCount(t, f), 1) // only the run has a record

	echo := callCap(t, f, `{"qualified_name":"fake.one.echo","payload":{"message":"hi"}}`)
	is.Equal(echo.Output, protocol.Object{"message": "hi"})
	failed := callCap(t, f, `{"qualified_name":"fake.one.fail","payload":{"message":"nope"}}`)
	is.Equal(failed.Outcome, "error") // a tool's error is its outcome, not a failed call
	is.True(strings.Contains(jsonOf(failed.Output), "nope"))
	is.Equal(len(failed.Diagnostics), 0)
}

func TestCallingAnUnknownOrUnusableCapabilityIsAKeyError(t *testing.T) {
	f := newFixture(t)
	for _, name := range []string{"nope.tool", "fake.off.hidden_tool", "spare.one.counter", "workflow.missing.v1", "workflow.bad"} {
		_, err := f.call(t, protocol.MethodCapabilitiesCall, `{"qualified_name":"`+name+`"}`)
		domainError(t, err, "KeyError")
	}
	echoArtifact(t, f) // a saved workflow of kind workflow is no wrapper capability
	_, err := f.call(t, protocol.MethodCapabilitiesCall, `{"qualified_name":"workflow.echo.v1","payload":{"message":"hi"}}`)
	domainError(t, err, "KeyError")
	_, err = f.call(t, protocol.MethodCapabilitiesCall, `{"qualified_name":"wf.std.constant","surprise":1}`)
	invalidParams(t, err)
}

// saveWrapper saves workspace ws as wrapper id v1 with outcomes.
func saveWrapper(t *testing.T, f *fixture, ws, id, outcomes string) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	res := mustCall[protocol.SavedArtifact](t, f, protocol.MethodWorkspaceCreateArtifact,
		`{"workspace_id":"`+ws+`","artifact_id":"`+id+`","version":1,"title":"T","kind":"wrapper","outcomes":`+outcomes+`}`)
	is.True(res.Saved) // the wrapper is saved
}

func TestCallingAWrapperRunsItAndAnswersTheWorkflowsOutcome(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws-echo", "fake.one.echo")
	saveWrapper(t, f, "ws-echo", "echo_wrapper", `["ok"]`)

	res := callCap(t, f, `{"qualified_name":"workflow.echo_wrapper.v1","payload":{"message":"hi"}}`)
	is.Equal(res.QualifiedName, "workflow.echo_wrapper.v1")
	is.Equal(res.SourceID, "workflow")
	is.Equal(res.Kind, "wrapper_artifact")
	is.True(res.DeploymentID == nil)
	is.Equal(res.Outcome, "ok") // the workflow's outcome, not the run status "completed"
	is.Equal(res.Output, protocol.Object{"message": "hi"})
	runs := mustCall[protocol.ListRunsResult](t, f, protocol.MethodRunsList, `{}`)
	is.Equal(runs.Total, 1) // a wrapper runs as a workflow, with a run record
	is.Equal(runs.Runs[0].ArtifactID, "echo_wrapper")
	is.Equal(runs.Runs[0].DeploymentID, "") // under no deployment

	// A wrapper that ends with an outcome of its own answers that outcome.
	scaffold(t, f, "ws-empty", "wf.std.constant")
	mustCall[protocol.WorkspaceResult](t, f, protocol.MethodWorkspaceReplaceDocument, `{"workspace_id":"ws-empty","revision":1,"draft":{
		"name":"empty","start":"call","outcomes":["empty"],
		"input_schema":{"type":"object"},"state_schema":{"type":"object"},"output_schema":{"type":"object"},
		"steps":{"call":{"use":"wf.std.constant","input":[{"value":1,"target":"value"}]},"done":{"end":{"outcome":"empty"}}},
		"routes":{"call":{"ok":"done"}}}}`)
	saveWrapper(t, f, "ws-empty", "empty", `["empty"]`)
	is.Equal(callCap(t, f, `{"qualified_name":"workflow.empty.v1"}`).Outcome, "empty")
}

func TestCallingAWrapperUnderADeployment(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws-wrap", "fake.one.echo")
	saveWrapper(t, f, "ws-wrap", "echo_wrapper", `["ok"]`)
	deploy(t, f, `{"id":"off","artifact_id":"echo_wrapper","artifact_version":1,"bindings":{"fake.one":"fake.off"}}`)
	echoArtifact(t, f)
	deploy(t, f, `{"id":"other","artifact_id":"echo","artifact_version":1,"bindings":{"fake.one":"fake.one"}}`)

	res := callCap(t, f, `{"qualified_name":"workflow.echo_wrapper.v1","payload":{"message":"bound"},"deployment_id":"off"}`)
	is.Equal(res.Outcome, "unrunnable") // the deployment's dependencies do not resolve
	is.True(res.Output == nil)
	is.Equal(diagCodes(res.Diagnostics), []string{"error:source_disabled"})
	is.Equal(*res.DeploymentID, "off")
	is.Equal(storedRunCount(t, f), 0) // and nothing ran

	_, err := f.call(t, protocol.MethodCapabilitiesCall, `{"qualified_name":"workflow.echo_wrapper.v1","deployment_id":"other"}`)
	msg := domainError(t, err, "ValueError") // the deployment must pin this very wrapper
	is.True(strings.Contains(msg, "does not target"))
	_, err = f.call(t, protocol.MethodCapabilitiesCall, `{"qualified_name":"workflow.echo_wrapper.v1","deployment_id":"nope"}`)
	domainError(t, err, "KeyError")

	deploy(t, f, `{"id":"same","artifact_id":"echo_wrapper","artifact_version":1,"bindings":{"fake.one":"fake.one"}}`)
	ok := callCap(t, f, `{"qualified_name":"workflow.echo_wrapper.v1","payload":{"message":"bound"},"deployment_id":"same"}`)
	is.Equal(ok.Outcome, "ok")
	is.Equal(ok.Output, protocol.Object{"message": "bound"})
	runs := mustCall[protocol.ListRunsResult](t, f, protocol.MethodRunsList, `{}`)
	is.Equal(runs.Runs[0].DeploymentID, "same")
}

func TestAWrapperWhoseRunFailsIsARuntimeErrorResult(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws-fail", "fake.one.fail")
	saveWrapper(t, f, "ws-fail", "fail_wrapper", `["ok"]`)

	res := callCap(t, f, `{"qualified_name":"workflow.fail_wrapper.v1","payload":{"message":"upstream says no"}}`)
	msg := failedCallMessage(t, res)
	is.True(strings.Contains(msg, "failed")) // the run failed: its tool_error step fails it
	runs := mustCall[protocol.ListRunsResult](t, f, protocol.MethodRunsList, `{}`)
	is.Equal(runs.Total, 1)
	is.True(strings.Contains(msg, runs.Runs[0].RunID)) // the message names the run, whose trace says more

	bad := callCap(t, f, `{"qualified_name":"workflow.fail_wrapper.v1","payload":{"message":5}}`)
	is.True(strings.Contains(failedCallMessage(t, bad), "input schema"))
	is.Equal(storedRunCount(t, f), 1) // a payload the wrapper refuses starts no run
}

func TestAWrapperThatCanPauseCannotBeCalledDirectly(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws-approve", "wf.std.constant")
	mustCall[protocol.WorkspaceResult](t, f, protocol.MethodWorkspaceReplaceDocument, `{"workspace_id":"ws-approve","revision":1,"draft":{
		"name":"approve","start":"ask","outcomes":["ok"],
		"state_schema":{"type":"object","properties":{"approved":{"type":"boolean"}}},
		"output_schema":{"type":"object","properties":{"approved":{"type":"boolean"}}},
		"steps":{"ask":{"interrupt":{"kind":"approval","request":[{"target":"message","value":"Ship it?"}],
		  "resume":[{"source":"approved","target":"state.approved"}]}}},
		"routes":{"ask":{"submitted":"__end__"}}}}`)
	saveWrapper(t, f, "ws-approve", "approve", `["ok"]`)
	_, err := f.call(t, protocol.MethodCapabilitiesCall, `{"qualified_name":"workflow.approve.v1"}`)
	msg := domainError(t, err, "ValueError")
	is.True(strings.Contains(msg, "interrupt"))
	is.Equal(storedRunCount(t, f), 0)
}
