package integration

// Workflows as MCP tasks (issue 30): the 2026-07-28 extension
// io.modelcontextprotocol/tasks (SEP-2663), spoken frame by frame from
// its specification (ext-tasks, specification/draft/tasks.md) against the
// real binary; the extension's own requester library drives it in
// mcp_tasks_client_test.go.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// tasksExtension is the extension's identifier.
const tasksExtension = "io.modelcontextprotocol/tasks"

// taskFrame is a 2026-07-28 request with the per-request _meta that era
// asks for; optIn declares the extension in its client capabilities.
func taskFrame(id int, method string, params map[string]any, optIn bool) string {
	caps := map[string]any{}
	if optIn {
		caps["extensions"] = map[string]any{tasksExtension: map[string]any{}}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "frames", "version": "0"},
		"io.modelcontextprotocol/clientCapabilities": caps,
	}
	raw, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return string(raw)
}

// taskReply is a decoded JSON-RPC answer of the face.
type taskReply struct {
	status int
	Result map[string]any `json:"result"`
	Error  *struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	} `json:"error"`
}

// sendTask posts a 2026-era frame with its routing headers: Mcp-Method,
// and Mcp-Name (a tool's name, or a task's id) where name is set.
func sendTask(t *testing.T, url, frame, method, name string) taskReply {
	t.Helper()
	return sendTaskAs(t, url, "", frame, method, name)
}

// sendTaskAs is sendTask with a bearer token ("": none).
func sendTaskAs(t *testing.T, url, token, frame, method, name string) taskReply {
	t.Helper()
	is := is.New(t)
	headers := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name != "" {
		headers["Mcp-Name"] = name
	}
	if token != "" {
		headers["Authorization"] = "Bearer " + token
	}
	r, err := sendMCP(testContext(t), url, frame, headers)
	is.NoErr(err) // POST /mcp
	var got taskReply
	is.NoErr(json.Unmarshal(sseData(t, r.body), &got)) // one JSON-RPC answer
	got.status = r.status
	return got
}

// taskCall is a tools/call of tool with args.
func taskCall(t *testing.T, url, tool string, args map[string]any, optIn bool) taskReply {
	t.Helper()
	return sendTask(t, url, taskFrame(2, "tools/call", map[string]any{"name": tool, "arguments": args}, optIn), "tools/call", tool)
}

// getTask is tasks/get of id, opted in.
func getTask(t *testing.T, url, id string) taskReply {
	t.Helper()
	return sendTask(t, url, taskFrame(3, "tasks/get", map[string]any{"taskId": id}, true), "tasks/get", id)
}

// createdTask checks a CreateTaskResult and returns its task id.
func createdTask(t *testing.T, r taskReply) string {
	t.Helper()
	is := is.New(t)
	is.Equal(r.Error, nil)
	is.Equal(r.Result["resultType"], "task") // a CreateTaskResult
	id, _ := r.Result["taskId"].(string)
	is.True(strings.HasPrefix(id, "run_")) // the run's id
	is.True(r.Result["status"] == "working" || r.Result["status"] == "input_required")
	for _, k := range []string{"createdAt", "lastUpdatedAt"} {
		_, err := time.Parse(time.RFC3339Nano, fmt.Sprint(r.Result[k]))
		is.NoErr(err) // ISO 8601 timestamps
	}
	ttl, ok := r.Result["ttlMs"]
	is.True(ok && ttl == nil) // present, null: kept until retention removes the run
	is.Equal(r.Result["pollIntervalMs"], float64(1000))
	_, detailed := r.Result["result"]
	is.True(!detailed) // no inlined result in a CreateTaskResult
	return id
}

// awaitTask polls tasks/get until the task's status is want.
func awaitTask(t *testing.T, url, id, want string) map[string]any {
	t.Helper()
	return poll.Value(t, "task "+id+" "+want, 30*time.Second, func() (map[string]any, bool) {
		r := getTask(t, url, id)
		return r.Result, r.Result != nil && r.Result["status"] == want
	})
}

// inputKey is the one key of an input_required task's inputRequests.
func inputKey(t *testing.T, task map[string]any) (string, map[string]any) {
	t.Helper()
	is := is.New(t)
	requests, _ := task["inputRequests"].(map[string]any)
	is.Equal(len(requests), 1) // the interrupt
	for k, v := range requests {
		req, _ := v.(map[string]any)
		return k, req
	}
	return "", nil
}

// approve answers an approval task's interrupt with tasks/update.
func approve(t *testing.T, url, id, key, comment string) taskReply {
	t.Helper()
	answer := map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"approved": true, "comment": comment}}}
	return sendTask(t, url, taskFrame(4, "tasks/update", map[string]any{"taskId": id, "inputResponses": answer}, true), "tasks/update", id)
}

// listenTasks opens subscriptions/listen for ids and hands each message
// of its stream to got until the stream ends.
func listenTasks(ctx context.Context, url string, ids []string, got chan<- map[string]any) error {
	defer close(got)
	frame := taskFrame(9, "subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": ids}}, true)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(frame))
	if err != nil {
		return err
	}
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for lines.Scan() {
		if data, ok := strings.CutPrefix(lines.Text(), "data:"); ok {
			var msg map[string]any
			if err := json.Unmarshal([]byte(strings.TrimSpace(data)), &msg); err != nil {
				return err
			}
			got <- msg
		}
	}
	return lines.Err()
}

// TestMCPTasksFrameByFrame speaks the tasks extension to /mcp as its
// specification writes the frames: server/discover declares it; a
// tools/call without the opt-in gets today's result, with it a
// CreateTaskResult whose taskId is the run's id; tasks/get answers the
// interrupt as an input request, tasks/update answers it, and the task
// completes with the tool's result inlined; subscriptions/listen streams
// notifications/tasks for it; tasks/cancel cancels a run; Mcp-Name must
// match, a request without the opt-in gets -32021, an unknown task
// -32602; and a task survives a restart of mcpflow on the same store.
func TestMCPTasksFrameByFrame(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	f := startFace(t, faceOptions{})
	url := f.mcp

	// server/discover declares the extension.
	disc := sendTask(t, url, taskFrame(1, "server/discover", map[string]any{}, true), "server/discover", "")
	caps, _ := disc.Result["capabilities"].(map[string]any)
	exts, _ := caps["extensions"].(map[string]any)
	is.Equal(exts[tasksExtension], map[string]any{}) // declared, no settings

	// Without the opt-in: today's tool result.
	plain := taskCall(t, url, counterTool, map[string]any{}, false)
	is.Equal(plain.Error, nil)
	is.Equal(plain.Result["resultType"], "complete")
	is.True(plain.Result["content"] != nil)

	// With it: a task, its id the run's.
	id := createdTask(t, taskCall(t, url, approveTool, map[string]any{}, true))
	inspected, err := f.ws.InspectRun(testContext(t), id)
	is.NoErr(err) // the run is committed before the answer
	is.Equal(*inspected.RunID, id)

	// notifications/tasks on subscriptions/listen.
	ctx, stop := context.WithTimeout(testContext(t), time.Minute)
	defer stop()
	notes := make(chan map[string]any, 16)
	listened := make(chan error, 1)
	go func() { listened <- listenTasks(ctx, url, []string{id, "run_unknown"}, notes) }()
	ack := <-notes
	is.Equal(ack["method"], "notifications/subscriptions/acknowledged")
	ackParams, _ := ack["params"].(map[string]any)
	is.Equal(ackParams["notifications"], map[string]any{"taskIds": []any{id}}) // the unknown task is not followed
	first := <-notes
	is.Equal(first["method"], "notifications/tasks")
	firstParams, _ := first["params"].(map[string]any)
	is.Equal(firstParams["taskId"], id)

	// tasks/get: the interrupt as an elicitation, keyed by the interrupt.
	task := awaitTask(t, url, id, "input_required")
	is.Equal(task["resultType"], "complete")
	key, request := inputKey(t, task)
	is.True(strings.HasPrefix(key, "interrupt:ask#")) // the interrupt, and the trace count that makes the key unique over the task's life
	is.Equal(request["method"], "elicitation/create")
	params, _ := request["params"].(map[string]any)
	is.Equal(params["message"], "Approve this deploy?")
	schema, _ := params["requestedSchema"].(map[string]any)
	is.Equal(schema["required"], []any{"approved", "comment"}) // the resume schema as a form

	// The routing header and the opt-in are required; an unknown task is -32602.
	wrongName := sendTask(t, url, taskFrame(5, "tasks/get", map[string]any{"taskId": id}, true), "tasks/get", "run_other")
	is.Equal(wrongName.status, http.StatusBadRequest)
	is.Equal(wrongName.Error.Code, -32020) // header mismatch
	noName := sendTask(t, url, taskFrame(5, "tasks/get", map[string]any{"taskId": id}, true), "tasks/get", "")
	is.Equal(noName.Error.Code, -32020)
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		missing := sendTask(t, url, taskFrame(6, method, map[string]any{"taskId": id, "inputResponses": map[string]any{}}, false), method, id)
		is.Equal(missing.Error.Code, -32021) // Missing Required Client Capability
		is.Equal(missing.Error.Data, map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{tasksExtension: map[string]any{}}}})
	}
	unknown := getTask(t, url, "run_00000000000000000000000000000000")
	is.Equal(unknown.Error.Code, -32602)

	// tasks/update answers the interrupt; the task completes with the tool's result.
	updated := approve(t, url, id, key, "ship it")
	is.Equal(updated.Error, nil)
	is.Equal(updated.Result, map[string]any{"resultType": "complete"}) // an empty acknowledgement
	done := awaitTask(t, url, id, "completed")
	res, _ := done["result"].(map[string]any)
	env, _ := res["structuredContent"].(map[string]any)
	is.Equal(env["run_id"], id)
	is.Equal(env["output"], map[string]any{"approved": true, "comment": "ship it"})
	is.Equal(res["isError"], nil) // omitted: no tool error
	stale := approve(t, url, id, key, "again")
	is.Equal(stale.Error, nil) // an answer to a key no longer outstanding is ignored

	// The listen saw the task change and ended with the run.
	var statuses []string
	for n := range notes {
		if n["method"] == "notifications/tasks" {
			params, _ := n["params"].(map[string]any)
			statuses = append(statuses, fmt.Sprint(params["status"]))
			meta, _ := params["_meta"].(map[string]any)
			is.Equal(meta["io.modelcontextprotocol/subscriptionId"], float64(9)) // the listen's request id
		}
	}
	is.NoErr(<-listened)
	is.True(len(statuses) > 0)
	is.Equal(statuses[len(statuses)-1], "completed") // the last notification is the end

	// A listen without the opt-in is -32021.
	noOpt := sendTask(t, url, taskFrame(9, "subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{id}}}, false), "subscriptions/listen", "")
	is.Equal(noOpt.Error.Code, -32021)

	// tasks/cancel cancels the run.
	sleeping := createdTask(t, taskCall(t, url, sleepTool, map[string]any{"ms": 60000}, true))
	cancelled := sendTask(t, url, taskFrame(7, "tasks/cancel", map[string]any{"taskId": sleeping}, true), "tasks/cancel", sleeping)
	is.Equal(cancelled.Result, map[string]any{"resultType": "complete"})
	ended := awaitTask(t, url, sleeping, "cancelled")
	is.True(strings.Contains(fmt.Sprint(ended["statusMessage"]), "cancelled"))
	run, err := f.ws.InspectRun(testContext(t), sleeping)
	is.NoErr(err)
	is.Equal(run.Status, "cancelled") // the run itself

	// A task survives a restart of mcpflow.
	waiting := createdTask(t, taskCall(t, url, approveTool, map[string]any{}, true))
	awaitTask(t, url, waiting, "input_required")
	url = restartFace(t, f)
	again := awaitTask(t, url, waiting, "input_required") // answered by the new process, from the store
	key, _ = inputKey(t, again)
	is.Equal(approve(t, url, waiting, key, "after the restart").Error, nil)
	after := awaitTask(t, url, waiting, "completed")
	res, _ = after["result"].(map[string]any)
	env, _ = res["structuredContent"].(map[string]any)
	is.Equal(env["output"], map[string]any{"approved": true, "comment": "after the restart"})
}

// restartFace stops f's mcpflow (SIGTERM) and starts it again on the same
// config and store; it returns the new /mcp URL.
func restartFace(t *testing.T, f *faceServer) string {
	t.Helper()
	is := is.New(t)
	is.NoErr(f.pr.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-f.pr.exited:
	case <-time.After(20 * time.Second):
		t.Fatal("mcpflow did not stop within 20s")
	}
	f.pr = startProcess(t, f.cfg, "mcpflow-again.log", "--run-wait", "2m")
	f.mcp = mcpEndpoint(f.pr)
	return f.mcp
}

// mcpEndpoint is the /mcp URL of a running mcpflow.
func mcpEndpoint(pr *process) string {
	return "http://" + strings.TrimSuffix(strings.TrimPrefix(pr.url, "ws://"), "/ws") + "/mcp"
}

// TestMCPTasksAnyNodeOfAClusterAnswersATask: a task created through node
// a's /mcp is answered by node c's from the shared PostgreSQL store:
// tasks/get says input_required with the interrupt, tasks/update through
// c resumes the run, and a sees the task complete.
func TestMCPTasksAnyNodeOfAClusterAnswersATask(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	c := servedCluster(t, stdioSource(clusterCounter, fakeMCP), "a", "c")
	onA := c.client(t, "a")
	saveArtifact(t, onA, "approval", approval, []string{"ok"})
	_, err := onA.SaveDeployment(testContext(t), p.Object{"id": "approval.default", "artifact_id": "approval", "artifact_version": 1,
		"bindings": []any{p.Object{"logical_source": clusterCounter, "concrete_source": clusterCounter}}})
	is.NoErr(err)
	urlA, urlC := mcpEndpoint(c.nodes["a"]), mcpEndpoint(c.nodes["c"])

	// The face of a offers the tool once it has read the deployment.
	created := poll.Value(t, "node a offers "+approveTool, settleWait, func() (taskReply, bool) {
		r := taskCall(t, urlA, approveTool, map[string]any{}, true)
		return r, r.Result["resultType"] == "task"
	})
	id := createdTask(t, created)

	task := awaitTask(t, urlC, id, "input_required") // node c, from the store
	key, _ := inputKey(t, task)
	is.Equal(approve(t, urlC, id, key, "through node c").Error, nil)
	done := awaitTask(t, urlA, id, "completed")
	res, _ := done["result"].(map[string]any)
	env, _ := res["structuredContent"].(map[string]any)
	is.Equal(env["output"], map[string]any{"approved": true, "comment": "through node c"})
}

// TestMCPTasksAreTheTokensRuns: a task is visible to a token as its run
// is. A token whose mcp_deployments leave the deployment out is told the
// task does not exist, for every task method, and its cancel cancels
// nothing; a token without the run scope may read the task but not
// answer it.
func TestMCPTasksAreTheTokensRuns(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	is := is.New(t)
	narrow := config.Token{Name: "narrow", Token: "narrow-" + strings.Repeat("n", 24), Scopes: []string{"read", "run"}, MCPDeployments: []string{"counter_workflow.default"}}
	f := startFace(t, faceOptions{
		access:  &config.Access{Tokens: []config.Token{readToken, runToken, adminToken, narrow}},
		wsToken: adminToken.Token, mcpToken: runToken.Token,
	})
	call := taskFrame(2, "tools/call", map[string]any{"name": approveTool, "arguments": map[string]any{}}, true)
	id := createdTask(t, sendTaskAs(t, f.mcp, runToken.Token, call, "tools/call", approveTool))
	get := taskFrame(3, "tasks/get", map[string]any{"taskId": id}, true)
	poll.For(t, "task "+id+" input_required", 30*time.Second, func() bool {
		return sendTaskAs(t, f.mcp, runToken.Token, get, "tasks/get", id).Result["status"] == "input_required"
	})

	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		r := sendTaskAs(t, f.mcp, narrow.Token, taskFrame(4, method, map[string]any{"taskId": id, "inputResponses": map[string]any{}}, true), method, id)
		is.True(r.Error != nil)
		is.Equal(r.Error.Code, -32602) // not its deployment: no such task
	}
	read := sendTaskAs(t, f.mcp, readToken.Token, get, "tasks/get", id)
	is.Equal(read.Result["status"], "input_required") // the read scope reads it
	key, _ := inputKey(t, read.Result)
	answer := map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"approved": true, "comment": "no"}}}
	refused := sendTaskAs(t, f.mcp, readToken.Token, taskFrame(5, "tasks/update", map[string]any{"taskId": id, "inputResponses": answer}, true), "tasks/update", id)
	is.True(refused.Error != nil)
	is.Equal(refused.Error.Code, -32003) // resuming needs the run scope
	run, err := f.ws.InspectRun(testContext(t), id)
	is.NoErr(err)
	is.Equal(run.Status, "interrupted") // nobody answered it, nobody cancelled it
}
