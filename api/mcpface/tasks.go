package mcpface

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/store"
	mfrpc "github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// Workflows as MCP tasks: the 2026-07-28 extension
// io.modelcontextprotocol/tasks (SEP-2663). A run is a task: the task id
// is the run id, so a task outlives the server's restarts and any node of
// a cluster answers for it from the store. go-sdk v1.8.0 knows no task
// method (it refuses an unknown method before any middleware) and cannot
// answer a tools/call with resultType "task", so a front before its
// stateless handler serves the extension's frames itself, each through
// the principal's Backend (the edge's method table):
//   - a tools/call of a deployment's tool whose _meta declares the
//     extension starts the run (workflow.runs.start, wait false) and
//     answers a CreateTaskResult once the run is committed;
//   - tasks/get inspects the run (workflow.runs.inspect) and answers its
//     task: working, input_required with the interrupt as an input
//     request, completed with the tool result the call would have given
//     (a failed run is a tool error, isError), or cancelled;
//   - tasks/update answers the interrupt (workflow.runs.resume);
//   - tasks/cancel cancels the run (workflow.runs.cancel);
//   - subscriptions/listen with taskIds streams notifications/tasks as the
//     runs change (workflow.runs.subscribe).
//
// Anything else, and a client that does not opt in, goes to go-sdk as
// before.

// tasksExtension names the extension, in capabilities and _meta.
const tasksExtension = "io.modelcontextprotocol/tasks"

// The extension's methods.
const (
	methodTasksGet    = "tasks/get"
	methodTasksUpdate = "tasks/update"
	methodTasksCancel = "tasks/cancel"
	methodToolsCall   = "tools/call"
	methodListen      = "subscriptions/listen"
)

// taskPollInterval is the pollIntervalMs every task suggests.
const taskPollInterval = time.Second

// taskCallTimeout bounds each workflow API call a task method makes.
const taskCallTimeout = 30 * time.Second

// maxListenTasks bounds the task ids one subscriptions/listen follows;
// listenTimeout bounds how long its stream stays open.
const (
	maxListenTasks = 64
	listenTimeout  = time.Hour
)

// codeMissingCapability is MCP's -32021, Missing Required Client
// Capability; codeHeaderMismatch its -32020 for an Mcp-Method or Mcp-Name
// header that does not match the body.
const (
	codeMissingCapability = mcp.CodeMissingRequiredClientCapabilities
	codeHeaderMismatch    = mcp.CodeHeaderMismatch
)

// announceTasks declares the extension in server/discover: 2026-era
// clients learn there that this server may answer a tools/call with a
// task. 2025-era sessions (initialize) are not told: they have no such
// tasks.
func announceTasks(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if d, ok := res.(*mcp.DiscoverResult); ok && err == nil && d.Capabilities != nil {
			d.Capabilities.AddExtension(tasksExtension, map[string]any{}) // a copy of the server's
		}
		return res, err
	}
}

// rpcFrame is one JSON-RPC request as the front reads it.
type rpcFrame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// taskParams are the params the front reads: a task method's taskId and
// inputResponses, a tools/call's name and arguments, a listen's task ids,
// and the request's _meta.
type taskParams struct {
	TaskID         string          `json:"taskId"`
	InputResponses json.RawMessage `json:"inputResponses"`
	Name           string          `json:"name"`
	Arguments      json.RawMessage `json:"arguments"`
	RequestState   string          `json:"requestState"`
	// Task is a 2025-era tools/call's task-augmentation (tasks2025.go);
	// Cursor a tasks/list's.
	Task          json.RawMessage `json:"task"`
	Cursor        *string         `json:"cursor"`
	Notifications *struct {
		TaskIDs []string `json:"taskIds"`
	} `json:"notifications"`
	Meta map[string]json.RawMessage `json:"_meta"`
}

// optedIn reports whether the request's per-request capabilities declare
// the extension.
func (p taskParams) optedIn() bool {
	return p.capabilities().Extensions[tasksExtension] != nil
}

// capabilities are the client's per-request capabilities (empty when
// missing or malformed).
func (p taskParams) capabilities() *mcp.ClientCapabilities {
	var caps mcp.ClientCapabilities
	if raw, ok := p.Meta[mcp.MetaKeyClientCapabilities]; ok {
		_ = json.Unmarshal(raw, &caps)
	}
	return &caps
}

// tasksFront serves the extension's frames before next, the stateless
// handler of 2026-era requests.
func (f *Face) tasksFront(servers *principalServers, maxBody int64, next http.Handler) http.Handler {
	return front(maxBody, next, func(tw taskWriter, r *http.Request, method string, p taskParams) bool {
		switch method {
		case methodTasksGet, methodTasksUpdate, methodTasksCancel:
			f.serveTaskMethod(tw, r, servers, method, p)
			return true
		case methodToolsCall:
			return p.optedIn() && f.serveTaskCall(tw, r, servers, p)
		case methodListen:
			if p.Notifications == nil || len(p.Notifications.TaskIDs) == 0 {
				return false
			}
			f.serveListen(tw, r, servers, p)
			return true
		}
		return false
	})
}

// front reads each POST's one JSON-RPC request (at most maxBody bytes)
// and hands it to serve, which reports whether it answered it; a request
// it did not answer, and anything else (a batch, a notification, a
// response, a frame too big or not JSON), goes on to next with its body
// as it came.
func front(maxBody int64, next http.Handler, serve func(tw taskWriter, r *http.Request, method string, p taskParams) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		limit := maxBody
		if limit <= 0 {
			limit = 4 << 20
		}
		head, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
		r.Body = readCloser{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
		var frame rpcFrame
		if err != nil || int64(len(head)) > limit || json.Unmarshal(head, &frame) != nil || len(frame.ID) == 0 || frame.Method == "" {
			next.ServeHTTP(w, r)
			return
		}
		var p taskParams
		_ = json.Unmarshal(frame.Params, &p)
		if !serve(taskWriter{w: w, id: frame.ID}, r, frame.Method, p) {
			next.ServeHTTP(w, r)
		}
	})
}

// readCloser reads a request body again from its start.
type readCloser struct {
	io.Reader
	io.Closer
}

// headersMatch checks the routing headers of a 2026-era request: Mcp-Method
// is its method, Mcp-Name its name (a tool's, or a task method's taskId).
func headersMatch(tw taskWriter, r *http.Request, method, name string) bool {
	switch {
	case r.Header.Get("Mcp-Method") != method:
		tw.fail(http.StatusBadRequest, codeHeaderMismatch, fmt.Sprintf("header mismatch: Mcp-Method %q does not match the body's %q", r.Header.Get("Mcp-Method"), method), nil)
	case r.Header.Get("Mcp-Name") != name:
		tw.fail(http.StatusBadRequest, codeHeaderMismatch, fmt.Sprintf("header mismatch: Mcp-Name %q does not match %q", r.Header.Get("Mcp-Name"), name), nil)
	default:
		return true
	}
	return false
}

// requireOptIn answers -32021 to a request that does not declare the
// extension, naming it.
func requireOptIn(tw taskWriter, p taskParams) bool {
	if p.optedIn() {
		return true
	}
	data := map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{tasksExtension: map[string]any{}}}}
	tw.fail(http.StatusOK, codeMissingCapability, "Missing required client capability: the "+tasksExtension+" extension", data)
	return false
}

// serveTaskMethod answers tasks/get, tasks/update and tasks/cancel.
func (f *Face) serveTaskMethod(tw taskWriter, r *http.Request, servers *principalServers, method string, p taskParams) {
	s := servers.served(r)
	switch {
	case s == nil:
		tw.fail(http.StatusUnauthorized, mfrpc.Unauthenticated, "not admitted", nil)
		return
	case !headersMatch(tw, r, method, p.TaskID), !requireOptIn(tw, p):
		return
	case p.TaskID == "":
		tw.fail(http.StatusOK, jsonrpc.CodeInvalidParams, "missing taskId", nil)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), taskCallTimeout)
	defer cancel()
	run, err := f.taskRun(ctx, s, p.TaskID)
	if err == nil {
		switch method {
		case methodTasksGet:
			tw.result(f.taskOf(s, run, true))
			return
		case methodTasksUpdate:
			err = f.updateTask(ctx, s, run, p.InputResponses)
		case methodTasksCancel:
			err = f.cancelTask(ctx, s, run)
		}
	}
	if err != nil {
		tw.error(err)
		return
	}
	tw.result(map[string]any{"resultType": "complete"})
}

// errNoTask refuses a task id that names no run the caller may see.
var errNoTask = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Failed to retrieve task: Task not found"}

// taskRun is the run of a task id, if the caller may see it: a run of a
// deployment its token sees (the method table checks the scope).
func (f *Face) taskRun(ctx context.Context, s *served, taskID string) (protocol.RunResult, error) {
	var r protocol.RunResult
	err := s.api.Call(ctx, protocol.MethodRunsInspect, protocol.RunIDParams{RunID: taskID}, &r)
	var e *mfrpc.Error
	switch {
	case errors.As(err, &e) && (e.Code == mfrpc.OperationFailed || e.Code == mfrpc.InvalidParams):
		return r, errNoTask
	case err != nil:
		return r, sdkError(err)
	case !s.who.SeesDeployment(r.DeploymentID):
		return r, errNoTask
	}
	return r, nil
}

// task is the extension's Task, with a DetailedTask's inlined fields.
type task struct {
	ResultType    string          `json:"resultType"`
	TaskID        string          `json:"taskId"`
	Status        string          `json:"status"`
	StatusMessage string          `json:"statusMessage,omitempty"`
	CreatedAt     string          `json:"createdAt"`
	LastUpdatedAt string          `json:"lastUpdatedAt"`
	TTLMs         *int64          `json:"ttlMs"`
	PollInterval  int64           `json:"pollIntervalMs"`
	InputRequests json.RawMessage `json:"inputRequests,omitempty"`
	// Result is the tool result the call would have given, resultType
	// complete as a 2026-era tools/call's is.
	Result map[string]any `json:"result,omitempty"`
}

// taskOf is a run's task, detailed (tasks/get, notifications/tasks) or
// not (CreateTaskResult). Its ttlMs is null: a run is kept until the
// store's retention removes it, which no task can foretell.
func (f *Face) taskOf(s *served, r protocol.RunResult, detailed bool) task {
	t := task{ResultType: "complete", Status: "working", CreatedAt: r.CreatedAt, LastUpdatedAt: r.UpdatedAt, PollInterval: taskPollInterval.Milliseconds()}
	if r.RunID != nil {
		t.TaskID = *r.RunID
	}
	switch {
	case r.Status == store.RunInterrupted && r.Interrupt == nil: // a row of workflow.runs.list
		t.Status = "input_required"
	case r.Status == store.RunInterrupted:
		t.Status = "input_required"
		p := pendingOf(r)
		t.StatusMessage = p.message
		if detailed {
			t.InputRequests = f.inputRequestsOf(s, p, taskInputKey(p, r))
			if string(t.InputRequests) == "{}" {
				t.StatusMessage = fmt.Sprintf("%s The answer cannot be asked as a form: resume the run %s with mcpflow_resume_run.", p.message, t.TaskID)
			}
		}
	case r.Status == store.RunCancelled:
		t.Status, t.StatusMessage = "cancelled", "The run was cancelled."
		if r.Error != nil {
			t.StatusMessage = "The run was cancelled: " + *r.Error
		}
	case store.Terminal(r.Status):
		// A failed run is the tool's error (isError), not a JSON-RPC one.
		t.Status = "completed"
		if detailed {
			res := result(envelopeOf(r), "")
			if r.Kind == store.RunPassthrough {
				res = passthroughResult(r)
			}
			t.Result = completeResult(res)
		}
	}
	return t
}

// taskInputKey is the key of a run's interrupt in its task's
// inputRequests. It must be unique over the task's life: an interrupt's id
// names its step, which a loop may reach again, so the key adds the run's
// trace count, which grows between any two interrupts and stays put while
// one waits (and across restarts: it is the record's).
func taskInputKey(p pending, r protocol.RunResult) string {
	return fmt.Sprintf("%s#%d", p.id, r.TraceCount)
}

// inputRequestsOf is the input request of an interrupted run, keyed by
// its interrupt: an elicitation (a form, or a URL) or a sampling request;
// none ({}) when the interrupt's resume schema is no form.
func (f *Face) inputRequestsOf(s *served, p pending, key string) json.RawMessage {
	if p.sampling == nil && p.url == "" && p.schema == nil {
		return json.RawMessage("{}")
	}
	in, err := p.request("")
	if err != nil {
		f.log.Warn("mcp face: a task's input request", "run_id", p.runID, "principal", s.who.Name, "err", err)
		return json.RawMessage("{}")
	}
	raw, err := json.Marshal(mcp.InputRequestMap{key: in})
	if err != nil {
		return json.RawMessage("{}")
	}
	return raw
}

// updateTask answers the run's interrupt with the response keyed by it;
// responses to any other key (answered, superseded, never issued) are
// ignored, as the extension says. An answer the resume schema refuses,
// or one that leaves the run waiting (an elicitation cancelled, or
// declined where the interrupt has no rejection outcome), is -32602: the
// key was answered, so the client would never be asked again.
func (f *Face) updateTask(ctx context.Context, s *served, r protocol.RunResult, raw json.RawMessage) error {
	var responses mcp.InputResponseMap
	if err := json.Unmarshal(raw, &responses); err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("inputResponses: %v", err)}
	}
	if r.Status != store.RunInterrupted {
		return nil
	}
	p := pendingOf(r)
	answer := responses[taskInputKey(p, r)]
	if answer == nil || !p.answeredBy(answer) {
		return nil
	}
	resumed, problem, err := f.answer(ctx, s, p, answer)
	switch {
	case err != nil:
		return sdkError(err)
	case problem != "":
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the answer was refused: " + problem}
	case !resumed:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("the run %s still waits: resume it with mcpflow_resume_run, or cancel the task", p.runID)}
	}
	return nil
}

// cancelTask cancels the task's run; a run that has ended already is
// acknowledged as it is.
func (f *Face) cancelTask(ctx context.Context, s *served, r protocol.RunResult) error {
	if store.Terminal(r.Status) {
		return nil
	}
	reason := "the MCP client cancelled the task"
	if err := s.api.Call(ctx, protocol.MethodRunsCancel, protocol.CancelRunParams{RunID: *r.RunID, Reason: &reason}, nil); err != nil {
		return sdkError(err)
	}
	return nil
}

// serveTaskCall answers a tools/call that opted into the extension with a
// task, where the tool is a deployment's tool offered to the caller: it
// starts the run and answers CreateTaskResult once the run is committed
// (workflow.runs.start returns it so). It reports false for any other
// call (a companion tool, a retry carrying requestState), which go-sdk
// serves as before.
func (f *Face) serveTaskCall(tw taskWriter, r *http.Request, servers *principalServers, p taskParams) bool {
	s := servers.served(r)
	if s == nil || p.RequestState != "" {
		return false
	}
	t, ok := f.offeredWorkflow(s, p.Name)
	if !ok {
		return false
	}
	if !headersMatch(tw, r, methodToolsCall, p.Name) {
		return true
	}
	ctx, cancel := context.WithTimeout(r.Context(), taskCallTimeout)
	defer cancel()
	created, refused, err := f.createTask(ctx, s, t, p, p.capabilities().Sampling != nil)
	switch {
	case err != nil:
		tw.error(err)
	case refused != nil:
		tw.toolResult(refused)
	default:
		created.ResultType = "task"
		tw.result(created)
	}
	return true
}

// createTask starts a run of t's deployment with the call's arguments and
// its idempotency key, if any (workflow.runs.start, wait false), and
// returns its task once the run is committed; or the tool error that
// tells the model what to correct.
func (f *Face) createTask(ctx context.Context, s *served, t workflowTool, p taskParams, sampling bool) (task, *mcp.CallToolResult, error) {
	var key *string
	if raw, ok := p.Meta[IdempotencyKeyMeta]; ok {
		var k string
		if json.Unmarshal(raw, &k) != nil || k == "" {
			return task{}, toolError("_meta %q must be a non-empty string", IdempotencyKeyMeta), nil
		}
		key = &k
	}
	runID, refused, err := f.startRun(ctx, s, t, p.Arguments, key, sampling)
	if err != nil || refused != nil {
		return task{}, refused, err
	}
	run, err := f.taskRun(ctx, s, runID)
	if err != nil {
		return task{}, nil, err
	}
	return f.taskOf(s, run, false), nil, nil
}

// offeredWorkflow is the deployment's tool of that name offered to s.
func (f *Face) offeredWorkflow(s *served, name string) (workflowTool, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := s.offered[name]; !ok {
		return workflowTool{}, false
	}
	for _, t := range f.visible(s.who) {
		if t.tool.Name == name {
			return t, true
		}
	}
	return workflowTool{}, false
}

// serveListen serves a subscriptions/listen that asks for task status
// notifications: it acknowledges the task ids it follows (at most
// maxListenTasks, those the caller may see; no other kind of notification
// on this stream), then sends each task's state and a notifications/tasks
// at each change of it, until every task has ended, the client goes away,
// or listenTimeout passes; then the listen's result.
func (f *Face) serveListen(tw taskWriter, r *http.Request, servers *principalServers, p taskParams) {
	s := servers.served(r)
	switch {
	case s == nil:
		tw.fail(http.StatusUnauthorized, mfrpc.Unauthenticated, "not admitted", nil)
		return
	case r.Header.Get("Mcp-Method") != methodListen:
		headersMatch(tw, r, methodListen, r.Header.Get("Mcp-Name"))
		return
	case !requireOptIn(tw, p):
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), listenTimeout)
	defer cancel()
	var runs []protocol.RunResult
	for _, id := range p.Notifications.TaskIDs {
		if len(runs) == maxListenTasks {
			break
		}
		if run, err := f.taskRun(ctx, s, id); err == nil && !slices.ContainsFunc(runs, func(r protocol.RunResult) bool { return *r.RunID == id }) {
			runs = append(runs, run)
		}
	}
	ids := make([]string, len(runs))
	for i, run := range runs {
		ids[i] = *run.RunID
	}
	sse := tw.stream()
	sse.notify("notifications/subscriptions/acknowledged", map[string]any{"notifications": map[string]any{"taskIds": ids}})
	var wg sync.WaitGroup
	for _, run := range runs {
		wg.Go(func() { f.followTask(ctx, s, run, sse) })
	}
	wg.Wait()
	sse.respond(map[string]any{"resultType": "complete", "_meta": map[string]any{}})
}

// followTask sends a task's state, then a notifications/tasks at each
// change of its status or interrupt, until the run ends or ctx does. It
// follows the run's events (workflow.runs.subscribe), subscribing again
// after a lag.
func (f *Face) followTask(ctx context.Context, s *served, run protocol.RunResult, sse *taskStream) {
	last := f.taskOf(s, run, true)
	sse.notify("notifications/tasks", last)
	var after int64
	for ctx.Err() == nil && !store.Terminal(run.Status) {
		changed, cursor, err := f.nextChange(ctx, s, *run.RunID, after)
		if err != nil {
			if ctx.Err() == nil {
				f.log.Info("mcp face: stop following a task", "task_id", *run.RunID, "err", err)
			}
			return
		}
		after = cursor
		if !changed {
			continue
		}
		next, err := f.taskRun(ctx, s, *run.RunID)
		if err != nil {
			return
		}
		run = next
		if now := f.taskOf(s, run, true); now.Status != last.Status || string(now.InputRequests) != string(last.InputRequests) {
			last = now
			sse.notify("notifications/tasks", now)
		}
	}
}

// nextChange waits for an event of the run after after that may change
// its task (a status event, an interrupt) or for the run's end; it
// reports false where the subscription lagged, to subscribe again.
func (f *Face) nextChange(ctx context.Context, s *served, runID string, after int64) (bool, int64, error) {
	sub, cancel := context.WithCancel(ctx)
	defer cancel()
	res, events, err := subscribeRun(sub, s, runID, after)
	if err != nil {
		return false, after, err
	}
	if !res.Active {
		return true, max(after, res.LastSequence), nil
	}
	for {
		select {
		case <-ctx.Done():
			return false, after, ctx.Err()
		case n := <-events:
			e, lagged, err := runEventOf(n, runID)
			switch {
			case err != nil:
				return false, after, err
			case lagged:
				return false, max(after, e.Seq), nil
			}
			after = e.Seq
			if e.Status != nil || e.Kind == "interrupted" {
				return true, after, nil
			}
		}
	}
}

// taskWriter answers one JSON-RPC request of the front.
type taskWriter struct {
	w  http.ResponseWriter
	id json.RawMessage
}

// result answers v as the request's result.
func (tw taskWriter) result(v any) {
	tw.write(http.StatusOK, map[string]any{"jsonrpc": "2.0", "id": tw.id, "result": v})
}

// toolResult answers a tools/call with a complete tool result.
func (tw taskWriter) toolResult(res *mcp.CallToolResult) { tw.result(completeResult(res)) }

// completeResult is a tool result as a 2026-era tools/call answers it:
// resultType complete.
func completeResult(res *mcp.CallToolResult) map[string]any {
	raw, _ := json.Marshal(res) // a tool result of JSON values always encodes
	var v map[string]any
	_ = json.Unmarshal(raw, &v)
	v["resultType"] = "complete"
	return v
}

// error answers err as a JSON-RPC error: a go-sdk *jsonrpc.Error as it
// is, anything else as -32603.
func (tw taskWriter) error(err error) {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		var data any
		if len(e.Data) > 0 {
			data = e.Data
		}
		tw.fail(http.StatusOK, e.Code, e.Message, data)
		return
	}
	tw.fail(http.StatusOK, jsonrpc.CodeInternalError, err.Error(), nil)
}

// fail answers a JSON-RPC error, with the HTTP status given.
func (tw taskWriter) fail(status int, code int64, message string, data any) {
	e := map[string]any{"code": code, "message": message}
	if data != nil {
		e["data"] = data
	}
	tw.write(status, map[string]any{"jsonrpc": "2.0", "id": tw.id, "error": e})
}

func (tw taskWriter) write(status int, v any) {
	raw, _ := json.Marshal(v) // JSON values always encode
	tw.w.Header().Set("Content-Type", "application/json")
	tw.w.WriteHeader(status)
	_, _ = tw.w.Write(raw)
}

// stream turns the answer into a server-sent event stream.
func (tw taskWriter) stream() *taskStream {
	tw.w.Header().Set("Content-Type", "text/event-stream")
	tw.w.Header().Set("Cache-Control", "no-cache, no-transform")
	tw.w.WriteHeader(http.StatusOK)
	return &taskStream{tw: tw, flusher: http.NewResponseController(tw.w)}
}

// taskStream writes the messages of a listen, one at a time; each
// notification carries the listen's request id as its subscription id.
type taskStream struct {
	tw      taskWriter
	flusher *http.ResponseController
	mu      sync.Mutex
}

func (st *taskStream) notify(method string, params any) {
	raw, _ := json.Marshal(params) // JSON values always encode
	var v map[string]any
	_ = json.Unmarshal(raw, &v)
	meta, _ := v["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[mcp.MetaKeySubscriptionID] = st.tw.id
	v["_meta"] = meta
	st.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": v})
}

func (st *taskStream) respond(result any) {
	st.send(map[string]any{"jsonrpc": "2.0", "id": st.tw.id, "result": result})
}

func (st *taskStream) send(msg any) {
	raw, _ := json.Marshal(msg) // JSON values always encode
	st.mu.Lock()
	defer st.mu.Unlock()
	_, _ = fmt.Fprintf(st.tw.w, "event: message\ndata: %s\n\n", raw)
	_ = st.flusher.Flush()
}
