package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/tracing"
)

// MCP tasks (protocol 2025-11-25): a tool whose execution.taskSupport is
// "required" (or "optional", when asked) is called with a task param and
// answers at once with a CreateTaskResult ({"task": {"taskId", "status",
// "pollInterval", ...}}), never the tool's result; the client polls
// tasks/get until the task's status is terminal, and fetches the result
// with tasks/result, which is what the tools/call would have answered.
// go-sdk v1.8.0 speaks none of it: these requests go through a taskLink.

// The methods and statuses of MCP tasks.
const (
	methodTaskGet    = "tasks/get"
	methodTaskResult = "tasks/result"
	methodTaskCancel = "tasks/cancel"
	methodTaskStatus = "notifications/tasks/status"

	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskFailed        = "failed"
	taskCancelled     = "cancelled"
)

// The poll of a task: at the server's pollInterval, never more often than
// MinTaskPoll nor less than MaxTaskPoll; DefaultTaskPoll when the server
// suggests none.
const (
	MinTaskPoll     = 100 * time.Millisecond
	MaxTaskPoll     = 10 * time.Second
	DefaultTaskPoll = time.Second
)

// taskCancelTimeout bounds the tasks/cancel sent for a cancelled call.
const taskCancelTimeout = 5 * time.Second

// task is a task's state as tasks/get and a CreateTaskResult give it.
type task struct {
	TaskID        string   `json:"taskId"`
	Status        string   `json:"status"`
	StatusMessage string   `json:"statusMessage,omitempty"`
	PollInterval  *float64 `json:"pollInterval,omitempty"`
}

// poll is how long to wait before the next tasks/get.
func (t task) poll() time.Duration {
	if t.PollInterval == nil || *t.PollInterval <= 0 {
		return DefaultTaskPoll
	}
	return min(max(time.Duration(*t.PollInterval*float64(time.Millisecond)), MinTaskPoll), MaxTaskPoll)
}

// taskCallParams are the params of a task-augmented tools/call.
type taskCallParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      mcp.Meta        `json:"_meta,omitempty"`
	Task      struct{}        `json:"task"`
}

// taskIDParams are the params of tasks/get, tasks/result and tasks/cancel.
type taskIDParams struct {
	TaskID string `json:"taskId"`
}

// taskRun is one task call on a session: what it needs to reach its task
// and to tell its caller.
type taskRun struct {
	link taskLink
	call CallTool
	// origin is the session's part of the TaskRef of a task it creates.
	origin TaskRef
	// created tells the caller the task, once created.
	created func(TaskRef)
	// stopping ends when the session actor stops: a call cut off by it
	// leaves its task running upstream (it outlives mcpflow), where one
	// cut off by its deadline or its owner's cancel cancels it.
	stopping context.Context
	// keep, once set, says the call's owner halts (CancelCalls.KeepTasks):
	// the call ends, its task goes on.
	keep *atomic.Bool
	// leave is called when the call ends and leaves its task running
	// upstream: the session is kept for it (keepUpstream).
	leave func()
	// token is the progressToken of the call that creates the task: the
	// server reports the task's progress under it for the task's life, and
	// the session hands that progress to the call, as an ordinary call's.
	token string
}

// run calls the tool as a task, or continues the task call.Task.Resume
// names, and answers with the task's result. err and rpcErr as for
// callTool; rpcErr is only set for a failure of the session itself.
func (r taskRun) run(ctx context.Context) (ToolResult, error, error) {
	var t task
	if ref := r.call.Task.Resume; ref != nil {
		t = task{TaskID: ref.ID, Status: taskWorking}
	} else {
		created, inline, err := r.create(ctx)
		if err != nil || inline != nil {
			return r.answer(inline, err)
		}
		t = created
		ref := r.origin
		ref.ID = t.TaskID
		r.created(ref)
	}
	res, err := r.follow(ctx, t)
	out, err, rpcErr := r.answer(res, err)
	out.TaskID = t.TaskID
	return out, err, rpcErr
}

// create calls the tool with a task param. The answer is the task, or
// (a server that ran the tool at once) the tool's result.
func (r taskRun) create(ctx context.Context) (task, *mcp.CallToolResult, error) {
	args := r.call.Arguments
	if len(args) == 0 {
		args = emptyArguments
	}
	p := taskCallParams{Name: r.call.Tool, Arguments: args, Meta: tracing.Meta(r.call.TraceParent, r.call.TraceState)}
	if r.token != "" {
		if p.Meta == nil {
			p.Meta = mcp.Meta{}
		}
		p.Meta["progressToken"] = r.token
	}
	raw, err := r.link.call(ctx, "tools/call", p)
	if err != nil {
		return task{}, nil, err
	}
	var created struct {
		Task *task `json:"task"`
	}
	if err := json.Unmarshal(raw, &created); err != nil {
		return task{}, nil, fmt.Errorf("decode the answer to tools/call: %w", err)
	}
	if created.Task == nil {
		res, err := toolResult(raw)
		return task{}, res, err
	}
	if created.Task.TaskID == "" {
		return task{}, nil, errors.New("the server created a task without a taskId")
	}
	return *created.Task, nil, nil
}

// follow polls t until it ends, and fetches its result: a completed
// task's (or one waiting for input: tasks/result then carries the
// server's requests, and returns once the task ends). A failed or
// cancelled task fails the call; the call's end cancels the task.
func (r taskRun) follow(ctx context.Context, t task) (*mcp.CallToolResult, error) {
	woken, release := r.link.waker().watch(t.TaskID)
	defer release()
	for {
		switch t.Status {
		case taskCompleted, taskInputRequired:
			raw, err := r.link.call(ctx, methodTaskResult, taskIDParams{TaskID: t.TaskID})
			if err != nil {
				return nil, r.cut(ctx, t, err)
			}
			return toolResult(raw)
		case taskFailed:
			return nil, fmt.Errorf("%w: task %s failed: %s", ErrTaskFailed, t.TaskID, orNone(t.StatusMessage))
		case taskCancelled:
			return nil, fmt.Errorf("%w: task %s was cancelled upstream: %s", ErrTaskCancelled, t.TaskID, orNone(t.StatusMessage))
		}
		wait := time.NewTimer(t.poll())
		select {
		case <-wait.C:
		case <-woken:
			wait.Stop()
		case <-ctx.Done():
			wait.Stop()
			return nil, r.cut(ctx, t, ctx.Err())
		}
		raw, err := r.link.call(ctx, methodTaskGet, taskIDParams{TaskID: t.TaskID})
		if err != nil {
			return nil, r.cut(ctx, t, err)
		}
		var next task
		if err := json.Unmarshal(raw, &next); err != nil {
			return nil, fmt.Errorf("decode the answer to tasks/get: %w", err)
		}
		if next.TaskID == "" {
			next.TaskID = t.TaskID
		}
		t = next
	}
}

// cut is the error of a task request that failed with err: when the call
// itself ended (its deadline, its owner's cancel), the task is cancelled
// upstream first, unless the session actor is stopping; a session the
// server no longer knows, or a task it no longer knows, is ErrTaskLost.
func (r taskRun) cut(ctx context.Context, t task, err error) error {
	if ctx.Err() != nil {
		if r.stopping.Err() == nil && !r.keep.Load() {
			r.cancel(t.TaskID)
			return fmt.Errorf("task %s cancelled upstream: %w", t.TaskID, err)
		}
		r.leave()
		return fmt.Errorf("task %s left running upstream: %w", t.TaskID, err)
	}
	if wire, ok := errors.AsType[*jsonrpc.Error](err); errors.Is(err, errTaskSessionGone) || ok && wire.Code == jsonrpc.CodeInvalidParams {
		return fmt.Errorf("%w: task %s: %w", ErrTaskLost, t.TaskID, err)
	}
	return fmt.Errorf("task %s: %w", t.TaskID, err)
}

// cancel sends tasks/cancel, within taskCancelTimeout and the session
// actor's life.
func (r taskRun) cancel(id string) {
	ctx, cancel := context.WithTimeout(r.stopping, taskCancelTimeout)
	defer cancel()
	_, _ = r.link.call(ctx, methodTaskCancel, taskIDParams{TaskID: id}) // best effort: the call ends either way
}

// answer projects a task's result as callTool projects a call's.
func (r taskRun) answer(res *mcp.CallToolResult, err error) (ToolResult, error, error) {
	what := r.call.Connection + "." + r.call.Tool
	if err != nil {
		err, _ = answerTooLarge(err, r.call.Connection)
		if _, ok := errors.AsType[*jsonrpc.Error](err); ok && !errors.Is(err, ErrResultTooLarge) && !errors.Is(err, ErrTaskLost) {
			err = protocolError{err}
		}
		return ToolResult{}, fmt.Errorf("call %s: %w", what, err), nil
	}
	outcome := "ok"
	if res.IsError {
		outcome = "error"
	}
	output, content, err := projectOutput(res)
	if err != nil {
		return ToolResult{}, fmt.Errorf("call %s: %w", what, err), nil
	}
	return ToolResult{Outcome: outcome, Output: output, Content: content}, nil, nil
}

// toolResult decodes a CallToolResult.
func toolResult(raw json.RawMessage) (*mcp.CallToolResult, error) {
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("decode the tool's result: %w", err)
	}
	return &res, nil
}

func orNone(s string) string {
	if s == "" {
		return "(no status message)"
	}
	return s
}

// listTaskSupport reads each tool's execution.taskSupport, which go-sdk
// v1.8.0 does not keep, with a tools/list of its own on link, into
// snap's tools.
func listTaskSupport(ctx context.Context, link taskLink, snap *catalog.Snapshot) error {
	support := map[string]string{}
	cursor := ""
	for range maxListPages {
		var p struct {
			Cursor string `json:"cursor,omitempty"`
		}
		p.Cursor = cursor
		raw, err := link.call(ctx, "tools/list", p)
		if err != nil {
			return err
		}
		var page struct {
			Tools []struct {
				Name      string `json:"name"`
				Execution *struct {
					TaskSupport string `json:"taskSupport"`
				} `json:"execution"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return fmt.Errorf("decode tools/list: %w", err)
		}
		for _, t := range page.Tools {
			if t.Execution != nil {
				support[t.Name] = t.Execution.TaskSupport
			}
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	for i := range snap.Tools {
		switch s := support[snap.Tools[i].Name]; s {
		case catalog.TaskOptional, catalog.TaskRequired, catalog.TaskForbidden:
			snap.Tools[i].TaskSupport = s
		}
	}
	return nil
}

// maxListPages bounds the pages of a tools/list read for task support.
const maxListPages = 100
