package storetest

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// testDeepCopy mutates records after writing them and after reading them:
// the stored records must not change either way.
func testDeepCopy(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()

	w := workspace("ws", 1)
	is.NoErr(s.CreateWorkspace(ctx, w))
	*w.Title = "mutated"
	w.Draft["name"] = "mutated"
	w.Diagnostics[0].Message = "mutated"
	got, err := s.GetWorkspace(ctx, "ws")
	is.NoErr(err)
	is.Equal(got, workspace("ws", 1)) // writes copy in
	*got.Title = "mutated"
	got.Draft["steps"].(map[string]any)["fetch"] = "mutated"
	list, err := s.ListWorkspaces(ctx)
	is.NoErr(err)
	list[0].Draft["name"] = "mutated"
	got, err = s.GetWorkspace(ctx, "ws")
	is.NoErr(err)
	is.Equal(got, workspace("ws", 1)) // reads copy out

	a := artifact("wf", 1, "workflow", "Fetch", ptr("Fetches"))
	_, err = s.SaveArtifact(ctx, a)
	is.NoErr(err)
	a.Plan.Nodes[0].Node = "mutated"
	a.InputSchema["type"] = "mutated"
	gotA, err := s.GetArtifact(ctx, "wf", 1)
	is.NoErr(err)
	*gotA.Description = "mutated"
	gotA.RequiredCapabilities[0].Kind = "mutated"
	gotA, err = s.GetArtifact(ctx, "wf", 1)
	is.NoErr(err)
	is.Equal(gotA, artifact("wf", 1, "workflow", "Fetch", ptr("Fetches")))

	d := deployment("dep")
	is.NoErr(s.SaveDeployment(ctx, d))
	d.Bindings[0].ConcreteSource = "mutated"
	gotD, err := s.GetDeployment(ctx, "dep")
	is.NoErr(err)
	gotD.Bindings[0].ConcreteSource = "mutated"
	gotD, err = s.GetDeployment(ctx, "dep")
	is.NoErr(err)
	is.Equal(gotD, deployment("dep"))

	c := snapshot("conn")
	is.NoErr(s.SaveCatalog(ctx, c))
	c.Tools[0].InputSchema["type"] = "mutated"
	gotC, err := s.GetCatalog(ctx, "conn")
	is.NoErr(err)
	gotC.Tools[0].Name = "mutated"
	gotC, err = s.GetCatalog(ctx, "conn")
	is.NoErr(err)
	is.Equal(gotC, snapshot("conn"))

	r := run("run", store.RunRunning, t0)
	is.NoErr(s.CreateRun(ctx, r))
	entries := []workflow.TraceEntry{entry("fetch", workflow.End)}
	r.TraceCount = 1
	is.NoErr(s.RecordProgress(ctx, r, entries))
	r.Input["url"] = "mutated"
	entries[0].Output["status"] = "mutated"
	gotR, err := s.GetRun(ctx, "run")
	is.NoErr(err)
	gotR.Deployment.Bindings[0].ConcreteSource = "mutated"
	trace, err := s.ReadTrace(ctx, "run", 0, 0)
	is.NoErr(err)
	trace[0].ResolvedInput["node"] = "mutated"
	runs, _, err := s.ListRuns(ctx, store.RunQuery{})
	is.NoErr(err)
	runs[0].Input["url"] = "mutated"

	want := run("run", store.RunRunning, t0)
	want.TraceCount = 1
	gotR, err = s.GetRun(ctx, "run")
	is.NoErr(err)
	is.Equal(gotR, want)
	trace, err = s.ReadTrace(ctx, "run", 0, 0)
	is.NoErr(err)
	is.Equal(trace, []workflow.TraceEntry{entry("fetch", workflow.End)})
}
