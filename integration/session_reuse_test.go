package integration

import (
	"encoding/json"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes"
)

// buildCounterDeployment authors, saves and deploys the counter workflow
// of connection connID, as the reference system's seed scenario does.
func buildCounterDeployment(t testing.TB, c *client.Client, connID string) string {
	t.Helper()
	is := is.New(t)
	ctx := testContext(t)

	refreshed, err := c.RefreshConnectionCatalog(ctx, connID)
	is.NoErr(err)
	is.True(refreshed.NodeCount >= 1)

	ws, err := c.CreateDraftWorkspaceFromCapability(ctx, p.CreateFromCapabilityParams{
		WorkspaceID: "counter_ws", CapabilityName: connID + ".counter",
		Name: ptr("counter_workflow"), Title: ptr("Counter Workflow"),
	})
	is.NoErr(err)
	is.Equal(ws.Status, "valid")
	is.Equal(ws.Revision, 1)

	saved, err := c.CreateArtifactFromWorkspace(ctx, p.CreateArtifactParams{
		WorkspaceID: "counter_ws", ArtifactID: "counter_workflow", Version: 1,
		Title: "Counter Workflow", Outcomes: []string{"ok", "error"}, Kind: ptr("workflow"),
	})
	is.NoErr(err)
	is.True(saved.Saved)
	is.Equal(saved.RequiredLogicalSources, []string{connID})
	is.Equal(saved.SuggestedBindings, map[string]string{connID: connID})

	bindings := []any{}
	for logical, concrete := range saved.SuggestedBindings {
		bindings = append(bindings, p.Object{"logical_source": logical, "concrete_source": concrete})
	}
	dep, err := c.SaveDeployment(ctx, p.Object{
		"id": "counter_workflow.default", "artifact_id": "counter_workflow", "artifact_version": 1, "bindings": bindings,
	})
	is.NoErr(err)
	is.True(dep.Saved)
	return dep.DeploymentID
}

// runTwice runs the deployment twice and checks the counts 1 then 2.
func runTwice(t *testing.T, c *client.Client, deploymentID string) {
	t.Helper()
	is := is.New(t)
	for want := 1; want <= 2; want++ {
		run, err := c.RunDeployment(testContext(t), p.StartRunParams{DeploymentID: deploymentID, WorkflowInput: p.Object{}})
		is.NoErr(err)
		is.Equal(run.Status, "completed")
		is.Equal(*run.Outcome, "ok")
		is.Equal(run.Output, p.Object{"count": float64(want)})
		is.Equal(run.TraceCount, 1) // one call step, routed ok to the end
	}
}

func TestTwoRunsReuseOneSession(t *testing.T) {
	is := is.New(t)
	recording := fakes.NewRecording(fakes.NewInMemory(nil))
	svc := startService(t, session.Factories{config.TransportStdio: recording}, stdioSource("fixture.default", "in-memory"))
	c := svc.dial(t)

	deployment := buildCounterDeployment(t, c, "fixture.default")
	runTwice(t, c, deployment)

	is.Equal(recording.SessionsCreated(), 1) // the refresh and both runs share one session
	calls := recording.ToolCalls()
	is.Equal(len(calls), 2)
	for _, call := range calls {
		is.Equal(call.Connection, "fixture.default")
		is.Equal(call.Name, "counter")
		is.Equal(call.Arguments, json.RawMessage(`{}`))
	}
}

func TestOneStdioProcessServesBothRuns(t *testing.T) {
	is := is.New(t)
	svc := startService(t, nil, stdioSource("demo.default", binary, "demo-server"))
	c := svc.dial(t)
	listed, err := c.ListCapabilities(testContext(t), p.ListCapabilitiesParams{SourceID: ptr("demo.default")})
	is.NoErr(err)
	is.Equal(listed.Total, 4) // warmed up at start: listed before any refresh

	deployment := buildCounterDeployment(t, c, "demo.default")
	runTwice(t, c, deployment) // counts 1 then 2: the subprocess kept its state

	statuses, err := c.GetConnectionStatuses(testContext(t))
	is.NoErr(err)
	is.Equal(statuses.Total, 1)
	st := statuses.Statuses[0]
	is.Equal(st.Session.State, "open")
	is.Equal(st.Session.SessionsOpened, 1) // one process, spawned once
	is.True(st.HasSnapshot)
}

func ptr[T any](v T) *T { return &v }
