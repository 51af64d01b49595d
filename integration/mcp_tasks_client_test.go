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
	"slices"
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
	var got tasksDriverResult
	runDriverScript(t, "mcptasks.mjs", scenario, &got, pinnedPeer{tsClientPackage, tsClientVersion}, extTasks)
	return got
}

// runDriverScript runs the driver testdata/script, which needs peers, on
// scenario to its end (at most 90 s), and decodes what it prints into out.
func runDriverScript(t *testing.T, script string, scenario map[string]any, out any, peers ...pinnedPeer) {
	t.Helper()
	is := is.New(t)
	node, prefix := nodePeers(t, peers...)
	script, err := filepath.Abs(filepath.Join("testdata", script))
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
		t.Logf("%s: %v\nstderr:\n%s", filepath.Base(script), err, stderr.String())
		is.NoErr(err) // the driver ran the scenario
	}
	is.NoErr(json.Unmarshal(stdout.Bytes(), out)) // one JSON object
	t.Logf("%s: %s", filepath.Base(script), stdout.String())
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

// tasks2025Result is what testdata/mcptasks2025.mjs prints.
type tasks2025Result struct {
	Capabilities map[string]any  `json:"capabilities"`
	TaskSupport  map[string]any  `json:"task_support"`
	Steps        []tasks2025Step `json:"steps"`
	Elicitations []struct {
		Message     string         `json:"message"`
		RelatedTask map[string]any `json:"related_task"`
	} `json:"elicitations"`
}

type tasks2025Step struct {
	Messages  []string       `json:"messages"`
	TaskID    string         `json:"task_id"`
	Statuses  []string       `json:"statuses"`
	Result    map[string]any `json:"result"`
	Error     string         `json:"error"`
	Cancelled map[string]any `json:"cancelled"`
	Task      map[string]any `json:"task"`
}

// TestMCPTasksOf2025WithTheTypeScriptSDK has the TypeScript SDK 1.32.2's
// experimental tasks client run deployments as 2025-11-25 tasks through
// /mcp: initialize declares the tasks capability and tools/list the
// deployments' tools task-capable; callToolStream runs one to its
// result; one's interrupt is asked of the client as an elicitation while
// it waits on tasks/result, and its answer completes the run; one is
// cancelled with cancelTask, and so is its run; getTask and
// getTaskResult answer a finished task again.
func TestMCPTasksOf2025WithTheTypeScriptSDK(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	tsV1.require(t)
	f := startFace(t, faceOptions{})
	answer := map[string]any{"approved": true, "comment": "from the 2025 client"}

	var got tasks2025Result
	runDriverScript(t, "mcptasks2025.mjs", map[string]any{"url": f.mcp, "answer": answer, "steps": []any{
		map[string]any{"op": "stream", "tool": counterTool},
		map[string]any{"op": "stream", "tool": approveTool},
		map[string]any{"op": "cancel", "tool": sleepTool, "arguments": map[string]any{"ms": 60000}},
		map[string]any{"op": "fetch", "from": 0},
	}}, &got, pinnedPeer{tsSDKPackage, tsSDKVersion})
	is.Equal(got.Capabilities, map[string]any{"list": map[string]any{}, "cancel": map[string]any{},
		"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}) // declared in initialize
	is.Equal(got.TaskSupport[counterTool], "optional")
	is.Equal(got.TaskSupport["mcpflow_get_run"], nil) // the companion tools are no tasks
	is.Equal(len(got.Steps), 4)

	counted := got.Steps[0]
	is.Equal(counted.Error, "")
	is.Equal(counted.Messages[0], "taskCreated")
	is.Equal(counted.Messages[len(counted.Messages)-1], "result")
	env, _ := counted.Result["structuredContent"].(map[string]any)
	is.Equal(env["run_id"], counted.TaskID) // the task id is the run id
	is.Equal(env["output"], map[string]any{"count": float64(1)})
	meta, _ := counted.Result["_meta"].(map[string]any)
	is.Equal(meta["io.modelcontextprotocol/related-task"], map[string]any{"taskId": counted.TaskID})

	approved := got.Steps[1]
	is.Equal(approved.Error, "")
	is.True(slices.Contains(approved.Statuses, "input_required")) // the run waited on its interrupt
	env, _ = approved.Result["structuredContent"].(map[string]any)
	is.Equal(env["output"], answer) // the elicitation's answer resumed it
	is.Equal(len(got.Elicitations), 1)
	is.Equal(got.Elicitations[0].Message, "Approve this deploy?")
	is.Equal(got.Elicitations[0].RelatedTask, map[string]any{"taskId": approved.TaskID}) // asked as the task's

	cancelled := got.Steps[2]
	is.Equal(cancelled.Error, "")
	is.Equal(cancelled.Cancelled["taskId"], cancelled.TaskID)
	is.Equal(cancelled.Task["status"], "cancelled")
	run, err := f.ws.InspectRun(testContext(t), cancelled.TaskID)
	is.NoErr(err)
	is.Equal(run.Status, "cancelled")

	fetched := got.Steps[3]
	is.Equal(fetched.Error, "")
	is.Equal(fetched.Task["status"], "completed")
	env, _ = fetched.Result["structuredContent"].(map[string]any)
	is.Equal(env["output"], map[string]any{"count": float64(1)})
}
