package integration

// Workflows as MCP tasks, driven by the extension's own requester
// library: npm @modelcontextprotocol/ext-tasks@0.2.2 on
// @modelcontextprotocol/client@2.3.1 (testdata/mcptasks.mjs).

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/fakes/poll"
)

// extTasks is the extension's requester library, installed by .ci/run.
var extTasks = pinnedPeer{"@modelcontextprotocol/ext-tasks", "0.2.2"}

// tasksDriverResult is what testdata/mcptasks.mjs prints.
type tasksDriverResult struct {
	ProtocolVersion string         `json:"protocol_version"`
	Capabilities    map[string]any `json:"capabilities"`
	Steps           []struct {
		Kind      string         `json:"kind"`
		TaskID    string         `json:"task_id"`
		Status    string         `json:"status"`
		Result    map[string]any `json:"result"`
		Error     string         `json:"error"`
		Reference map[string]any `json:"reference"`
	} `json:"steps"`
	Inputs []struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
		Scope   string `json:"scope"`
		InputID string `json:"input_id"`
		TaskID  string `json:"task_id"`
	} `json:"inputs"`
	Errors []string `json:"errors"`
}

// runTasksDriver runs testdata/mcptasks.mjs on scenario to its end (at
// most 90 s).
func runTasksDriver(t *testing.T, scenario map[string]any) tasksDriverResult {
	t.Helper()
	is := is.New(t)
	node, prefix := nodePeers(t, pinnedPeer{tsClientPackage, tsClientVersion}, extTasks)
	script, err := filepath.Abs(filepath.Join("testdata", "mcptasks.mjs"))
	is.NoErr(err)
	data, err := json.Marshal(scenario)
	is.NoErr(err)
	ctx, cancel := context.WithTimeout(testContext(t), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, string(data))
	cmd.Env = append(os.Environ(), "MCPFLOW_PEERS="+prefix)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Logf("mcptasks.mjs: %v\nstderr:\n%s", err, stderr.String())
		is.NoErr(err) // the driver ran the scenario
	}
	var got tasksDriverResult
	is.NoErr(json.Unmarshal(stdout.Bytes(), &got)) // one JSON object
	t.Logf("mcptasks.mjs: %s", stdout.String())
	return got
}

// TestMCPTasksWithTheExtensionsRequesterLibrary has the extension's own
// library run deployments as tasks through /mcp: one settles with the
// run's result; one's interrupt reaches the application as the task's
// input request, and its answer completes the run; one is cancelled, and
// so is its run; one is handed off by reference, mcpflow restarts on the
// same store, and a new session recovers the task by id and settles it.
func TestMCPTasksWithTheExtensionsRequesterLibrary(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	nodePeers(t, pinnedPeer{tsClientPackage, tsClientVersion}, extTasks)
	f := startFace(t, faceOptions{})
	answer := map[string]any{"approved": true, "comment": "from ext-tasks"}

	got := runTasksDriver(t, map[string]any{"url": f.mcp, "answer": answer, "steps": []any{
		map[string]any{"op": "run", "tool": counterTool},
		map[string]any{"op": "run", "tool": approveTool},
		map[string]any{"op": "cancel", "tool": sleepTool, "arguments": map[string]any{"ms": 60000}},
		map[string]any{"op": "create", "tool": approveTool},
	}})
	is.Equal(got.ProtocolVersion, "2026-07-28")
	is.Equal(len(got.Errors), 0) // the library reported no background error
	is.Equal(len(got.Steps), 4)
	for _, s := range got.Steps {
		is.Equal(s.Error, "")
		is.Equal(s.Kind, "task") // every deployment's call became a task
	}

	// Settled with the run's result: the tool result the face builds.
	counted := got.Steps[0]
	is.Equal(counted.Status, "completed")
	env, _ := counted.Result["structuredContent"].(map[string]any)
	is.Equal(env["run_id"], counted.TaskID) // the task id is the run id
	is.Equal(env["output"], map[string]any{"count": float64(1)})

	// The interrupt reached the application as the task's input request.
	approved := got.Steps[1]
	is.Equal(approved.Status, "completed")
	env, _ = approved.Result["structuredContent"].(map[string]any)
	is.Equal(env["output"], answer)
	is.Equal(len(got.Inputs), 1)
	is.Equal(got.Inputs[0].Kind, "elicitation")
	is.Equal(got.Inputs[0].Message, "Approve this deploy?")
	is.Equal(got.Inputs[0].Scope, "task") // delivered through tasks/update, not a request retry
	is.Equal(got.Inputs[0].TaskID, approved.TaskID)

	// Cancelled, run and all.
	cancelled := got.Steps[2]
	is.Equal(cancelled.Status, "cancelled")
	poll.For(t, "run "+cancelled.TaskID+" cancelled", 20*time.Second, func() bool {
		r, err := f.ws.InspectRun(testContext(t), cancelled.TaskID)
		is.NoErr(err)
		return r.Status == "cancelled"
	})

	// Recovered by id after a restart of mcpflow.
	ref := got.Steps[3].Reference
	is.Equal(ref["taskId"], got.Steps[3].TaskID)
	url := restartFace(t, f)
	again := runTasksDriver(t, map[string]any{"url": url, "answer": answer, "steps": []any{
		map[string]any{"op": "recover", "reference": ref},
	}})
	is.Equal(len(again.Steps), 1)
	recovered := again.Steps[0]
	is.Equal(recovered.Error, "")
	is.Equal(recovered.TaskID, got.Steps[3].TaskID)
	is.Equal(recovered.Status, "completed")
	env, _ = recovered.Result["structuredContent"].(map[string]any)
	is.Equal(env["output"], answer)
	is.Equal(len(again.Inputs), 1) // the interrupt, asked of the new session
}
