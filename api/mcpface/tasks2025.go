package mcpface

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// The experimental tasks of 2025-11-25, on the era's stateful sessions:
// the same runs as tasks (tasks.go), in that revision's frames. initialize
// declares the tasks capability (list, cancel, task-augmented tools/call)
// and tools/list marks each deployment's tool execution.taskSupport
// "optional"; a front before go-sdk's stateful handler serves, on a live
// session of the caller's:
//   - tools/call with a task param: the run is started, CreateTaskResult
//     {task} answers once it is committed;
//   - tasks/get: the task (flat);
//   - tasks/result: waits for the run as a plain call does (followRun),
//     asking its interrupts of the session's client as elicitations, and
//     answers the tool's result with the related-task _meta;
//   - tasks/list: the runs the token sees, as tasks;
//   - tasks/cancel: cancels the run and answers its task.

// The 2025-11-25 task methods beyond tasks.go's.
const (
	methodTasksResult = "tasks/result"
	methodTasksList   = "tasks/list"
)

// relatedTaskMeta is the _meta key that ties a message to its task.
const relatedTaskMeta = "io.modelcontextprotocol/related-task"

// taskResultTimeout bounds one tasks/result's wait; the client asks again.
const taskResultTimeout = 10 * time.Minute

// taskListLimit is a tasks/list page's size.
const taskListLimit = 50

// errTaskResultGone ends a tasks/result's wait whose client went away,
// or whose bound passed: the run goes on (see callEnded).
var errTaskResultGone = errors.New("the tasks/result request ended")

// legacyTasksCapability is the tasks capability initialize declares.
var legacyTasksCapability = map[string]any{"list": map[string]any{}, "cancel": map[string]any{},
	"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}

// legacyTasks declares the 2025-11-25 tasks: initialize's capabilities
// gain tasks, and a 2025-era session's tools/list marks the deployments'
// tools task-capable. go-sdk's types have neither field, so the results
// are wrapped with the fields added as they are encoded.
func (f *Face) legacyTasks(s *served) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			switch r := res.(type) {
			case *mcp.InitializeResult:
				return &initializeWithTasks{r}, nil
			case *mcp.ListToolsResult:
				if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss.ID() != "" {
					return &toolsWithTasks{r, f.deploymentTools(s)}, nil
				}
			}
			return res, nil
		}
	}
}

// deploymentTools are the names of the deployments' tools s offers.
func (f *Face) deploymentTools(s *served) map[string]bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	names := map[string]bool{}
	for _, t := range f.visible(s.who) {
		if _, ok := s.offered[t.tool.Name]; ok {
			names[t.tool.Name] = true
		}
	}
	return names
}

// initializeWithTasks is initialize's result with the tasks capability.
type initializeWithTasks struct{ *mcp.InitializeResult }

func (r *initializeWithTasks) MarshalJSON() ([]byte, error) {
	return withFields(r.InitializeResult, func(v map[string]any) {
		if caps, ok := v["capabilities"].(map[string]any); ok {
			caps["tasks"] = legacyTasksCapability
		}
	})
}

// toolsWithTasks is a tools/list page whose deployments' tools say they
// may run as tasks.
type toolsWithTasks struct {
	*mcp.ListToolsResult
	tasks map[string]bool
}

func (r *toolsWithTasks) MarshalJSON() ([]byte, error) {
	return withFields(r.ListToolsResult, func(v map[string]any) {
		tools, _ := v["tools"].([]any)
		for _, t := range tools {
			if tool, ok := t.(map[string]any); ok && r.tasks[fmt.Sprint(tool["name"])] {
				tool["execution"] = map[string]any{"taskSupport": "optional"}
			}
		}
	})
}

// withFields encodes v with add's changes to its JSON object.
func withFields(v any, add func(map[string]any)) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	add(obj)
	return json.Marshal(obj)
}

// legacyTasksFront serves the 2025-11-25 task frames before next, the
// stateful handler, for a session of the caller's that go-sdk holds;
// anything else, or a request of no such session, goes to go-sdk.
func (f *Face) legacyTasksFront(servers *principalServers, maxBody int64, next http.Handler) http.Handler {
	return front(maxBody, next, func(tw taskWriter, r *http.Request, method string, p taskParams) bool {
		switch method {
		case methodToolsCall:
			if len(p.Task) == 0 || string(p.Task) == "null" {
				return false
			}
		case methodTasksGet, methodTasksResult, methodTasksList, methodTasksCancel:
		default:
			return false
		}
		s := servers.served(r)
		if s == nil {
			return false
		}
		ss := sessionOf(s, r.Header.Get("Mcp-Session-Id"))
		if ss == nil {
			return false // go-sdk answers: no such session
		}
		if method == methodToolsCall {
			return f.serveLegacyTaskCall(tw, r, s, ss, p)
		}
		f.serveLegacyTaskMethod(tw, r, s, ss, method, p)
		return true
	})
}

// sessionOf is the session of s's server with id, nil when there is none.
func sessionOf(s *served, id string) *mcp.ServerSession {
	if id == "" {
		return nil
	}
	for ss := range s.srv.Sessions() {
		if ss.ID() == id {
			return ss
		}
	}
	return nil
}

// serveLegacyTaskCall answers a task-augmented tools/call of a
// deployment's tool with CreateTaskResult; false for any other tool.
func (f *Face) serveLegacyTaskCall(tw taskWriter, r *http.Request, s *served, ss *mcp.ServerSession, p taskParams) bool {
	t, ok := f.offeredWorkflow(s, p.Name)
	if !ok {
		return false
	}
	ctx, cancel := context.WithTimeout(r.Context(), taskCallTimeout)
	defer cancel()
	ip := ss.InitializeParams()
	task, refused, err := f.createTask(ctx, s, t, p, ip != nil && ip.Capabilities != nil && ip.Capabilities.Sampling != nil)
	switch {
	case err != nil:
		tw.error(err)
	case refused != nil:
		tw.result(refused)
	default:
		tw.result(map[string]any{"task": legacyTaskOf(task)})
	}
	return true
}

// serveLegacyTaskMethod answers tasks/get, tasks/result, tasks/list and
// tasks/cancel.
func (f *Face) serveLegacyTaskMethod(tw taskWriter, r *http.Request, s *served, ss *mcp.ServerSession, method string, p taskParams) {
	if method == methodTasksResult {
		f.serveTaskResult(tw, r, s, ss, p.TaskID)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), taskCallTimeout)
	defer cancel()
	if method == methodTasksList {
		res, err := f.listTasks(ctx, s, p.Cursor)
		if err != nil {
			tw.error(err)
			return
		}
		tw.result(res)
		return
	}
	run, err := f.taskRun(ctx, s, p.TaskID)
	if err == nil && method == methodTasksCancel {
		if store.Terminal(run.Status) {
			err = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("Cannot cancel task: already in terminal status %q", f.taskOf(s, run, false).Status)}
		} else if err = f.cancelTask(ctx, s, run); err == nil {
			run, err = f.taskRun(ctx, s, p.TaskID)
		}
	}
	if err != nil {
		tw.error(err)
		return
	}
	tw.result(legacyTaskOf(f.taskOf(s, run, false)))
}

// serveTaskResult answers tasks/result: the tool's result once the run
// has ended, following it as a plain call does meanwhile, its interrupts
// asked of the session's client (an elicitation, on the session's
// stream). The wait ends with its bound or the request; neither ends
// the run.
func (f *Face) serveTaskResult(tw taskWriter, r *http.Request, s *served, ss *mcp.ServerSession, taskID string) {
	base, gone := context.WithCancelCause(context.WithoutCancel(r.Context()))
	defer gone(nil)
	defer context.AfterFunc(r.Context(), func() { gone(errTaskResultGone) })()
	ctx, cancel := context.WithTimeoutCause(base, taskResultTimeout, errTaskResultGone)
	defer cancel()
	run, err := f.taskRun(ctx, s, taskID)
	if err != nil {
		tw.error(err)
		return
	}
	var res *mcp.CallToolResult
	if store.Terminal(run.Status) {
		res = result(envelopeOf(run), "")
	} else {
		t, lerr := f.lookup(s.who, run.DeploymentID)
		if lerr != nil {
			t = workflowTool{deploymentID: run.DeploymentID, tool: &mcp.Tool{Name: run.DeploymentID}}
		}
		req := &mcp.CallToolRequest{Session: ss, Params: &mcp.CallToolParamsRaw{Name: t.tool.Name, Meta: mcp.Meta{relatedTaskMeta: map[string]any{"taskId": taskID}}}}
		if res, err = f.followRun(ctx, s, req, t, taskID, 0); err != nil {
			tw.error(err)
			return
		}
	}
	if res.Meta == nil {
		res.Meta = mcp.Meta{}
	}
	res.Meta[relatedTaskMeta] = map[string]any{"taskId": taskID}
	tw.result(res)
}

// relateToTask gives a request asked of the client during a task's
// tasks/result the task's related-task _meta, as 2025-11-25 asks.
func relateToTask(req *mcp.CallToolRequest, in mcp.InputRequest) {
	related, ok := req.Params.GetMeta()[relatedTaskMeta]
	if !ok {
		return
	}
	if m, ok := in.(interface {
		GetMeta() map[string]any
		SetMeta(map[string]any)
	}); ok {
		meta := m.GetMeta()
		if meta == nil {
			meta = map[string]any{}
		}
		meta[relatedTaskMeta] = related
		m.SetMeta(meta)
	}
}

// listTasks is a page of the runs the caller sees, as tasks.
func (f *Face) listTasks(ctx context.Context, s *served, cursor *string) (map[string]any, error) {
	limit := taskListLimit
	var page protocol.ListRunsResult
	if err := s.api.Call(ctx, protocol.MethodRunsList, protocol.ListRunsParams{Cursor: cursor, Limit: &limit}, &page); err != nil {
		return nil, sdkError(err)
	}
	tasks := []any{}
	for _, row := range page.Runs {
		if !s.who.SeesDeployment(row.DeploymentID) {
			continue
		}
		run := protocol.RunResult{RunID: &row.RunID, DeploymentID: row.DeploymentID, Status: row.Status, CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt}
		tasks = append(tasks, legacyTaskOf(f.taskOf(s, run, false)))
	}
	res := map[string]any{"tasks": tasks}
	if page.NextCursor != nil {
		res["nextCursor"] = *page.NextCursor
	}
	return res, nil
}

// legacyTaskOf is a task in 2025-11-25's shape: ttl and pollInterval.
func legacyTaskOf(t task) map[string]any {
	out := map[string]any{"taskId": t.TaskID, "status": t.Status, "createdAt": t.CreatedAt, "lastUpdatedAt": t.LastUpdatedAt,
		"ttl": nil, "pollInterval": t.PollInterval}
	if t.StatusMessage != "" {
		out["statusMessage"] = t.StatusMessage
	}
	return out
}
