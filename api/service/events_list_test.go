package service_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/protocol"
)

func adminEvents(t *testing.T, f *fixture) []protocol.AdminEvent {
	t.Helper()
	is := is.New(t)
	is.Helper()
	res := conforming[protocol.ListAdminEventsResult](t, f, protocol.MethodAdminEventsList, `{}`)
	is.Equal(res.Total, len(res.Events))
	for _, e := range res.Events {
		is.True(e.TimestampEpochMs > 0) // every event has its timestamp (Appendix C.9)
		is.True(e.Payload != nil)
	}
	return res.Events
}

func eventKinds(evs []protocol.AdminEvent) []string {
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		out = append(out, e.Kind)
	}
	return out
}

// eventsOfKind returns the events of one kind.
func eventsOfKind(evs []protocol.AdminEvent, kind string) []protocol.AdminEvent {
	var out []protocol.AdminEvent
	for _, e := range evs {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func TestEventsListIsEmptyAtFirst(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	is.Equal(len(adminEvents(t, f)), 0)
	raw := generic(t, f.raw(t, protocol.MethodAdminEventsList, `{}`))
	is.Equal(raw["events"], []any{}) // a list, never null
}

func TestSavesAndDeletesAreEvents(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoArtifact(t, f)
	deploy(t, f, `{"id":"d","artifact_id":"echo","artifact_version":1,"bindings":{"fake.one":"fake.one"}}`)
	_, err := createFromPlan(t, f, "planned", compiledPlan(t, f, "ws-const", "wf.std.constant"), "")
	is.NoErr(err)
	conforming[protocol.DeleteDeploymentResult](t, f, protocol.MethodDeploymentsDelete, `{"deployment_id":"d"}`)
	conforming[protocol.DeleteArtifactResult](t, f, protocol.MethodArtifactsDelete, `{"artifact_id":"planned","version":1}`)

	evs := adminEvents(t, f)
	is.Equal(eventKinds(evs), []string{"workflow_artifact_saved", "workflow_deployment_saved", "workflow_artifact_saved", "workflow_deployment_deleted", "workflow_artifact_deleted"})
	is.Equal(*evs[0].CapabilityID, "workflow.echo.v1")
	is.Equal(evs[0].Payload["created_from_draft"], true)
	is.Equal(*evs[1].CapabilityID, "deployment.d")
	is.Equal(evs[1].Payload["artifact_id"], "echo")
	is.Equal(evs[2].Payload["created_from_plan"], true)
	is.Equal(evs[3].Payload, protocol.Object{"deployment_id": "d"})
	is.Equal(*evs[4].CapabilityID, "workflow.planned.v1")
	for i := 1; i < len(evs); i++ {
		is.True(evs[i].TimestampEpochMs >= evs[i-1].TimestampEpochMs) // oldest first
	}
}

func TestRunsAreEvents(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	counterDeployment(t, f)
	run := startRun(t, f, `{"deployment_id":"count"}`)

	started := eventsOfKind(adminEvents(t, f), "workflow_run_started")
	is.Equal(len(started), 1)
	is.Equal(started[0].Payload["run_id"], *run.RunID)
	is.Equal(*started[0].WorkflowName, "counter")
	completed := eventsOfKind(adminEvents(t, f), "workflow_run_completed")
	is.Equal(len(completed), 1) // written before runs.start answered
	is.Equal(completed[0].Payload["outcome"], "ok")
	is.Equal(completed[0].Payload["status"], "completed")

	approvalDeployment(t, f)
	paused := startRun(t, f, `{"deployment_id":"approve"}`)
	is.Equal(paused.Status, "interrupted")
	mustCall[protocol.RunResult](t, f, protocol.MethodRunsResume, `{"run_id":"`+*paused.RunID+`","resume_payload":{"approved":true}}`)
	resumed := eventsOfKind(adminEvents(t, f), "workflow_run_resumed")
	is.Equal(len(resumed), 1)
	is.Equal(resumed[0].Payload["run_id"], *paused.RunID)
	is.Equal(len(eventsOfKind(adminEvents(t, f), "workflow_run_completed")), 2) // the resumed run completed

	scaffold(t, f, "ws-fail", "fake.one.fail")
	saveArtifact(t, f, "ws-fail", "fails", "")
	deploy(t, f, `{"id":"fails","artifact_id":"fails","artifact_version":1,"bindings":{"fake.one":"fake.one"}}`)
	failed := startRun(t, f, `{"deployment_id":"fails","workflow_input":{"message":"upstream says no"}}`)
	is.Equal(failed.Status, "failed")
	failures := eventsOfKind(adminEvents(t, f), "workflow_run_failed")
	is.Equal(len(failures), 1)
	is.Equal(failures[0].Payload["run_id"], *failed.RunID)
	is.True(!strings.Contains(jsonOf(failures[0]), "upstream says no")) // the error stays in the run
}

func TestCatalogRefreshesAreEvents(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	mustCall[protocol.RefreshCatalogResult](t, f, protocol.MethodConnectionsRefreshCatalog, `{"connection_id":"fake.one"}`)
	_, err := f.call(t, protocol.MethodConnectionsRefreshCatalog, `{"connection_id":"fake.off"}`)
	domainError(t, err, "RuntimeError") // a disabled connection cannot refresh

	evs := adminEvents(t, f)
	is.Equal(evs[0].Kind, "catalog_refresh_started")
	is.Equal(*evs[0].ConnectionID, "fake.one")
	tools := eventsOfKind(evs, "tools_changed")
	is.Equal(len(tools), 1) // the live server has more tools than the seeded snapshot
	is.True(strings.Contains(jsonOf(tools[0].Payload["added"]), "fake.one.sleep"))
	is.Equal(len(eventsOfKind(evs, "resources_changed")), 1) // a greeting instead of the readme
	completed := eventsOfKind(evs, "catalog_refresh_completed")
	is.Equal(len(completed), 1)
	is.True(completed[0].Payload["node_count"].(float64) > 3)
	failed := eventsOfKind(evs, "catalog_refresh_failed")
	is.Equal(len(failed), 1)
	is.Equal(*failed[0].ConnectionID, "fake.off")
	is.Equal(evs[len(evs)-1].Kind, "catalog_refresh_failed")
}

func TestDirectToolCallsAreEvents(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	callCap(t, f, `{"qualified_name":"fake.one.echo","payload":{"message":"private words"}}`)
	evs := adminEvents(t, f)
	is.Equal(eventKinds(evs), []string{"tool_call_started", "tool_call_completed"})
	is.Equal(*evs[0].CapabilityID, "fake.one.echo")
	is.Equal(evs[0].Payload["input_keys"], []any{"message"}) // the input's keys, not its values
	is.True(!strings.Contains(jsonOf(evs), "private words"))
	is.Equal(evs[1].Payload["outcome"], "ok")
}

func TestAChangedToolADeploymentBindsIsRecordedAsDrift(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	counterDeployment(t, f) // saved against the seeded snapshot of fake.one
	before := mustCall[protocol.ValidateDeploymentResult](t, f, protocol.MethodDeploymentsValidate, `{"deployment_id":"count"}`)
	is.Equal(before.Status, "runnable")

	// The live server's counter differs from the seeded one.
	mustCall[protocol.RefreshCatalogResult](t, f, protocol.MethodConnectionsRefreshCatalog, `{"connection_id":"fake.one"}`)
	drift := eventsOfKind(adminEvents(t, f), "capability_drift")
	is.Equal(len(drift), 1)
	is.Equal(*drift[0].CapabilityID, "fake.one.counter")
	is.Equal(drift[0].Payload["deployments"], []any{"count"})
	after := mustCall[protocol.ValidateDeploymentResult](t, f, protocol.MethodDeploymentsValidate, `{"deployment_id":"count"}`)
	is.Equal(after.Status, "unrunnable") // drift policy block
	is.Equal(after.Diagnostics[0].Code, "schema_changed")
}
