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
	is.NoErr(s.CreateRun(ctx, r, nil))
	entries := []workflow.TraceEntry{entry("fetch", workflow.End)}
	r.TraceCount = 1
	r.State = runState()
	is.NoErr(s.RecordProgress(ctx, r, entries))
	r.Input["url"] = "mutated"
	r.State["page"].(map[string]any)["status"] = "mutated"
	entries[0].Output["status"] = "mutated"
	gotR, err := s.GetRun(ctx, "run")
	is.NoErr(err)
	gotR.Deployment.Bindings[0].ConcreteSource = "mutated"
	gotR.State["page"].(map[string]any)["links"].([]any)[0] = "mutated"
	trace, err := s.ReadTrace(ctx, "run", 0, 0)
	is.NoErr(err)
	trace[0].ResolvedInput["node"] = "mutated"
	runs, _, err := s.ListRuns(ctx, store.RunQuery{})
	is.NoErr(err)
	runs[0].Input["url"] = "mutated"
	runs[0].State["page"] = "mutated"

	want := run("run", store.RunRunning, t0)
	want.TraceCount = 1
	want.State = runState()
	gotR, err = s.GetRun(ctx, "run")
	is.NoErr(err)
	is.Equal(gotR, want)
	trace, err = s.ReadTrace(ctx, "run", 0, 0)
	is.NoErr(err)
	is.Equal(trace, []workflow.TraceEntry{entry("fetch", workflow.End)})
}

// runState is the checkpointed state of testDeepCopy's run.
func runState() map[string]any {
	return map[string]any{"page": map[string]any{"status": 200.0, "links": []any{"a", "b"}}}
}

// testDeepCopyRecords is testDeepCopy for auth records, registry entries
// and events.
func testDeepCopyRecords(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()

	a := authRecord("auth")
	a.Payload["headers"] = map[string]any{"X-Key": secret}
	is.NoErr(s.SaveAuth(ctx, a))
	a.Payload["access_token"] = "mutated"
	a.Payload["headers"].(map[string]any)["X-Key"] = "mutated"
	a.Metadata["scopes"].([]any)[0] = "mutated"
	gotA, err := s.GetAuth(ctx, "auth")
	is.NoErr(err)
	gotA.Payload["headers"].(map[string]any)["X-Key"] = "mutated"
	listA, err := s.ListAuth(ctx)
	is.NoErr(err)
	listA[0].Metadata["owner"] = "mutated"
	wantA := authRecord("auth")
	wantA.Payload["headers"] = map[string]any{"X-Key": secret}
	gotA, err = s.GetAuth(ctx, "auth")
	is.NoErr(err)
	is.Equal(gotA, wantA)

	e := registryEntry("src")
	is.NoErr(s.PutRegistryEntry(ctx, e))
	e.Transport["headers"].(map[string]any)["X-Tenant"] = "mutated"
	*e.AuthRef = "mutated"
	gotE, err := s.GetRegistryEntry(ctx, "src")
	is.NoErr(err)
	gotE.Transport["url"] = "mutated"
	*gotE.AuthRef = "mutated"
	listE, err := s.ListRegistryEntries(ctx)
	is.NoErr(err)
	listE[0].Metadata["note"] = "mutated"
	gotE, err = s.GetRegistryEntry(ctx, "src")
	is.NoErr(err)
	is.Equal(gotE, registryEntry("src"))

	ev := event(1)
	_, err = s.AppendEvent(ctx, ev)
	is.NoErr(err)
	ev.Payload["result"].(map[string]any)["ok"] = "mutated"
	*ev.ConnectionID = "mutated"
	events, err := s.ListEvents(ctx, 0, 0)
	is.NoErr(err)
	events[0].Payload["i"] = "mutated"
	*events[0].CapabilityID = "mutated"
	events, err = s.ListEvents(ctx, 0, 0)
	is.NoErr(err)
	is.Equal(events, []store.Event{numbered(event(1), 1)})
}
