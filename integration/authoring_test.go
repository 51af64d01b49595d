package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

// authoringAgent makes the calls an agent makes, failing the test on any
// JSON-RPC error, and tracks the workspace revision each answer reports.
type authoringAgent struct {
	t        *testing.T
	c        *client.Client
	revision int
}

// edit calls a step edit at the current revision and answers its result.
func (a *authoringAgent) edit(method string, params p.Object) p.DraftEditResult {
	a.t.Helper()
	is := is.New(a.t)
	is.Helper()
	params["workspace_id"] = "kv"
	params["revision"] = a.revision
	var res p.DraftEditResult
	is.NoErr(a.c.Call(testContext(a.t), method, params, &res))
	if res.Status == "conflict" {
		a.t.Logf("%s at revision %d: %+v", method, a.revision, res.Diagnostics)
	}
	is.True(res.Status != "conflict")    // the agent edits the latest revision
	is.Equal(res.Revision, a.revision+1) // every edit is one revision
	a.revision = res.Revision
	return res
}

// TestAnAgentAuthorsATwoStepWorkflowFromNothingAndRunsIt authors, over /ws
// and the real binary, a workflow that stores a value with the demo
// server's kv_set and reads it back with kv_get, using only create_empty,
// add_step_from_capability, bind and branch; then validates it, saves it,
// deploys it and runs it.
func TestAnAgentAuthorsATwoStepWorkflowFromNothingAndRunsIt(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("starts the real binary")
	}
	is := is.New(t)
	dir := t.TempDir()
	cfg := config.File{Version: 1, Server: config.Server{
		Store:   config.Store{Root: filepath.Join(dir, "store")},
		Sources: []config.Connection{stdioSource("demo.default", binary, "demo-server")},
	}}
	data, err := json.Marshal(cfg)
	is.NoErr(err)
	cfgPath := filepath.Join(dir, "mcpflow.json")
	is.NoErr(os.WriteFile(cfgPath, data, 0o600))
	c := dialURL(t, startProcess(t, cfgPath, "mcpflow.log").url)
	ctx := testContext(t)
	_, err = c.RefreshConnectionCatalog(ctx, "demo.default")
	is.NoErr(err)

	var created p.DraftEditResult
	is.NoErr(c.Call(ctx, p.MethodWorkspaceCreateEmpty, p.Object{"workspace_id": "kv", "name": "kv_roundtrip", "title": "Remember and recall"}, &created))
	is.Equal(created.Revision, 1)
	is.Equal(created.Status, "invalid") // no steps yet
	is.Equal(*created.NextActions.RecommendedNextTool, p.MethodWorkspaceAddStepFromCapability)
	agent := &authoringAgent{t: t, c: c, revision: created.Revision}

	// remember: kv_set(key <- input.key, value <- input.value). The tool
	// declares ok and error; both end the workflow for now.
	res := agent.edit(p.MethodWorkspaceAddStepFromCapability, p.Object{"step_id": "remember", "capability_name": "demo.default.kv_set",
		"routes": p.Object{"ok": "__end__", "error": "__end__"}})
	is.Equal(res.Summary.Start, "remember") // the first step is the start
	agent.edit(p.MethodWorkspaceBind, p.Object{"step_id": "remember", "source_path": "input.key", "target_path": "local.key"})
	agent.edit(p.MethodWorkspaceBind, p.Object{"step_id": "remember", "source_path": "input.value", "target_path": "local.value"})

	// recall: kv_get(key <- input.key), reached when remember succeeds; its
	// value and found become the workflow output.
	agent.edit(p.MethodWorkspaceAddStepFromCapability, p.Object{"step_id": "recall", "capability_name": "demo.default.kv_get",
		"routes": p.Object{"ok": "__end__", "error": "__end__"}})
	agent.edit(p.MethodWorkspaceBranch, p.Object{"step_id": "remember", "routes": p.Object{"ok": "recall"}})
	agent.edit(p.MethodWorkspaceBind, p.Object{"step_id": "recall", "source_path": "input.key", "target_path": "local.key"})
	agent.edit(p.MethodWorkspaceBind, p.Object{"step_id": "recall", "source_path": "local.value", "target_path": "output.value"})
	res = agent.edit(p.MethodWorkspaceBind, p.Object{"step_id": "recall", "source_path": "local.found", "target_path": "output.found"})
	if res.Status != "valid" {
		t.Logf("diagnostics: %+v", res.Diagnostics)
	}
	is.Equal(res.Status, "valid")
	is.Equal(*res.NextActions.RecommendedNextTool, p.MethodWorkspaceCreateArtifact)

	var validated p.WorkspaceResult
	is.NoErr(c.Call(ctx, p.MethodWorkspaceValidate, p.WorkspaceIDParams{WorkspaceID: "kv"}, &validated))
	is.Equal(validated.Status, "valid")
	is.Equal(validated.Revision, agent.revision) // validating is no edit
	is.Equal(validated.Summary.Steps, []string{"recall", "remember"})

	saved, err := c.CreateArtifactFromWorkspace(ctx, p.CreateArtifactParams{WorkspaceID: "kv", ArtifactID: "kv_roundtrip", Version: 1,
		Title: "Remember and recall", Outcomes: []string{"ok"}})
	is.NoErr(err)
	is.True(saved.Saved)
	is.Equal(saved.RequiredLogicalSources, []string{"demo.default"})
	artifact, err := c.InspectArtifact(ctx, "kv_roundtrip", 1)
	is.NoErr(err)
	is.Equal(artifact.InputSchema["properties"].(map[string]any)["key"].(map[string]any)["type"], "string") // projected by bind
	is.Equal(artifact.OutputSchema["properties"].(map[string]any)["found"].(map[string]any)["type"], "boolean")

	_, err = c.SaveDeployment(ctx, p.Object{"id": "kv.default", "artifact_id": "kv_roundtrip", "artifact_version": 1,
		"bindings": []any{p.Object{"logical_source": "demo.default", "concrete_source": "demo.default"}}})
	is.NoErr(err)
	started, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: "kv.default", WorkflowInput: p.Object{"key": "greeting", "value": "hello"}})
	is.NoErr(err)
	is.True(started.RunID != nil) // the run is stored
	run := settled(t, c, *started.RunID)
	if run.Status != "completed" {
		t.Logf("run %s is %s: %v", *started.RunID, run.Status, deref(run.Error))
	}
	is.Equal(run.Status, "completed")
	is.Equal(*run.Outcome, "ok")
	is.Equal(run.Output, p.Object{"value": "hello", "found": true}) // recalled from the session remember wrote to
}
