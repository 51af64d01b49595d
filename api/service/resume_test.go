package service_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/protocol"
)

// approvalDeployment deploys "approve": an interrupt for approval whose
// resume payload must say {"approved": <bool>}, copied to the output.
func approvalDeployment(t *testing.T, f *fixture) {
	t.Helper()
	scaffold(t, f, "ws-approve", "wf.std.constant")
	mustCall[protocol.WorkspaceResult](t, f, protocol.MethodWorkspaceReplaceDocument, `{"workspace_id":"ws-approve","revision":1,"draft":{
		"name":"approve","start":"ask","outcomes":["ok"],
		"state_schema":{"type":"object","properties":{"approved":{"type":"boolean"}}},
		"output_schema":{"type":"object","properties":{"approved":{"type":"boolean"}}},
		"steps":{"ask":{"interrupt":{"kind":"approval","request":[{"target":"message","value":"Ship it?"}],
		  "resume":[{"source":"approved","target":"state.approved"}],
		  "resume_schema":{"type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"]}}}},
		"routes":{"ask":{"submitted":"__end__"}}}}`)
	saveArtifact(t, f, "ws-approve", "approve", "")
	deploy(t, f, `{"id":"approve","artifact_id":"approve","artifact_version":1,"bindings":[]}`)
}

func TestAnInterruptedRunResumesOnlyWithAPayloadThatFitsItsSchema(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	approvalDeployment(t, f)

	r := startRun(t, f, `{"deployment_id":"approve"}`)
	is.Equal(r.Status, "interrupted")
	is.Equal(*r.ResumeReadiness, "ready")
	is.Equal(r.Interrupt["id"], "interrupt:ask")
	is.Equal(r.Interrupt["payload"], map[string]any{"message": "Ship it?"})
	is.Equal(*r.NextActions.RecommendedNextTool, protocol.MethodRunsResume)
	id := *r.RunID

	_, err := f.call(t, protocol.MethodRunsResume, `{"run_id":"`+id+`","resume_payload":{"approved":"yes"}}`)
	invalidParams(t, err) // the payload breaks the resume schema
	still := mustCall[protocol.RunResult](t, f, protocol.MethodRunsInspect, `{"run_id":"`+id+`"}`)
	is.Equal(still.Status, "interrupted") // and the run stays interrupted
	is.Equal(still.TraceCount, r.TraceCount)

	done := mustCall[protocol.RunResult](t, f, protocol.MethodRunsResume, `{"run_id":"`+id+`","resume_payload":{"approved":true},"trace_range":{"limit":10}}`)
	is.Equal(done.Status, "completed")
	is.Equal(*done.RunID, id) // the same run goes on
	is.Equal(done.Output, protocol.Object{"approved": true})
	is.Equal(len(done.Trace), 2) // the pause and the resume
	is.Equal(done.Trace[0].Outcome, "interrupt")
	is.Equal(done.Trace[1].Outcome, "submitted")

	_, err = f.call(t, protocol.MethodRunsResume, `{"run_id":"`+id+`","resume_payload":{"approved":true}}`)
	domainError(t, err, "ValueError") // a completed run does not resume
}

func TestCancellingAnInterruptedRunEndsIt(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	approvalDeployment(t, f)
	r := startRun(t, f, `{"deployment_id":"approve"}`)
	is.Equal(r.Status, "interrupted")

	c := mustCall[protocol.RunResult](t, f, protocol.MethodRunsCancel, `{"run_id":"`+*r.RunID+`","reason":"not today"}`)
	is.Equal(c.Status, "cancelled")
	is.Equal(*c.Error, "cancelled: not today")

	_, err := f.call(t, protocol.MethodRunsCancel, `{"run_id":"`+*r.RunID+`"}`)
	domainError(t, err, "ValueError") // a cancelled run cannot be cancelled again
}

func TestADeploymentsStepBudgetEndsARunawayLoop(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws-loop", "wf.std.constant")
	// The loop could exit on "falsey", but its value is always true.
	mustCall[protocol.WorkspaceResult](t, f, protocol.MethodWorkspaceReplaceDocument, `{"workspace_id":"ws-loop","revision":1,"draft":{
		"name":"spin","start":"again",
		"steps":{"again":{"use":"wf.std.truthy","input":[{"target":"value","value":true}]}},
		"routes":{"again":{"truthy":"again","falsey":"__end__"}}}}`)
	saveArtifact(t, f, "ws-loop", "spin", "")
	deploy(t, f, `{"id":"spin","artifact_id":"spin","artifact_version":1,"bindings":[],"limits":{"max_steps":25}}`)
	d := mustCall[protocol.Deployment](t, f, protocol.MethodDeploymentsInspect, `{"deployment_id":"spin"}`)
	is.Equal(*d.Limits.MaxSteps, 25) // the limits are kept with the deployment

	r := startRun(t, f, `{"deployment_id":"spin"}`)
	is.Equal(r.Status, "failed")
	is.Equal(*r.Error, `step budget exhausted: 25 steps executed, the next would be "again"`)
	is.Equal(r.TraceCount, 25) // every step ran to the budget, and is in the trace

	_, err := f.call(t, protocol.MethodDeploymentsSave, `{"deployment":{"id":"x","artifact_id":"spin","artifact_version":1,"limits":{"max_steps":0}}}`)
	invalidParams(t, err) // a budget is at least one step
}
