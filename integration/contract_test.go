package integration

import (
	"encoding/json"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/api/contract"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes"
)

// TestResultsKeepTheReferenceShapes calls every method mcpflow serves from
// the manifest and checks each result against the manifest's result schema.
func TestResultsKeepTheReferenceShapes(t *testing.T) {
	is := is.New(t)
	svc := startService(t, session.Factories{config.TransportStdio: fakes.NewInMemory(nil)}, stdioSource("fixture.default", "in-memory"))
	c := svc.dial(t)
	deployment := buildCounterDeployment(t, c, "fixture.default")
	run, err := c.RunDeployment(testContext(t), p.StartRunParams{DeploymentID: deployment})
	is.NoErr(err)
	failed := 3
	manifest, err := contract.Load()
	is.NoErr(err)

	calls := []struct {
		method string
		params any
	}{
		{p.MethodHealth, nil},
		{p.MethodCapabilitiesList, p.ListCapabilitiesParams{Limit: &failed}},
		{p.MethodCapabilitiesInspect, p.InspectCapabilityParams{QualifiedName: "fixture.default.counter"}},
		{p.MethodWorkspaceFromCapability, p.CreateFromCapabilityParams{WorkspaceID: "echo_ws", CapabilityName: "fixture.default.echo"}},
		{p.MethodWorkspaceFromCapability, p.CreateFromCapabilityParams{WorkspaceID: "echo_ws", CapabilityName: "fixture.default.echo"}}, // conflict
		{p.MethodWorkspaceGet, p.GetWorkspaceParams{WorkspaceID: "counter_ws", IncludeDraft: true}},
		{p.MethodWorkspaceCreateArtifact, p.CreateArtifactParams{WorkspaceID: "echo_ws", ArtifactID: "echo", Version: 1, Title: "Echo", Outcomes: []string{"ok"}}},
		{p.MethodArtifactsList, p.ListArtifactsParams{}},
		{p.MethodArtifactsInspect, p.InspectArtifactParams{ArtifactID: "counter_workflow", Version: 1}},
		{p.MethodDeploymentsInspect, p.DeploymentIDParams{DeploymentID: deployment}},
		{p.MethodDeploymentsList, nil},
		{p.MethodDeploymentsValidate, p.ValidateDeploymentParams{DeploymentID: deployment, LiveCheck: true}},
		{p.MethodRunsStart, p.StartRunParams{DeploymentID: deployment, TraceRange: &p.TraceRange{}}},
		{p.MethodRunsInspect, p.RunIDParams{RunID: *run.RunID}},
		{p.MethodRunsList, p.ListRunsParams{Limit: &failed}},
		{p.MethodConnectionsList, nil},
		{p.MethodConnectionStatusesList, nil},
	}
	shapes := is.NewRelaxed(t) // every mismatch is reported, not only the first
	for _, call := range calls {
		var raw json.RawMessage
		is.NoErr(c.Call(testContext(t), call.method, call.params, &raw))
		var result any
		is.NoErr(json.Unmarshal(raw, &result))
		if err := manifest.ValidateResult(call.method, result); err != nil {
			t.Logf("%s: result %s does not match the manifest: %v", call.method, raw, err)
			shapes.Fail() // the result matches the manifest's result schema
		}
	}
}
