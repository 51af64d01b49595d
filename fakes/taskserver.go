package fakes

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// TaskServer is a streamable HTTP MCP endpoint that speaks MCP tasks
// (protocol 2025-11-25), which go-sdk's server does not: one tool,
// "research", whose execution.taskSupport is "required". A task-augmented
// call of it creates a task that stays "working" for Polls tasks/get,
// then is completed with the text "report: " and the call's topic, or
// failed with FailWith when that is set. Tasks live in the session that
// created them, as the TypeScript SDK's servers keep them: a tasks/get
// under another session id does not find them. It records the task
// methods it served, and the sessions a DELETE ended. A task created by
// a call with a progressToken reports its progress under that token: each
// tasks/get that finds it working answers on an event stream, a
// notifications/progress (progress the polls so far, total Polls+1)
// before the answer.
type TaskServer struct {
	// Polls is how many tasks/get answer "working" before the task ends.
	Polls int
	// FailWith, when set, ends each task failed with this status message.
	FailWith string

	mu        sync.Mutex
	sessions  map[string]map[string]*fakeTask // tasks by id, by session id
	next      int
	methods   []string
	cancelled []string
	deleted   []string
}

type fakeTask struct {
	topic, status, message string
	polls                  int
	token                  any // the progressToken of the call that created it
}

// NewTaskServer returns a TaskServer whose tasks are done after polls
// polls.
func NewTaskServer(polls int) *TaskServer {
	return &TaskServer{Polls: polls, sessions: map[string]map[string]*fakeTask{}}
}

// Methods are the methods the server was sent, in order.
func (s *TaskServer) Methods() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.methods...)
}

// Cancelled are the tasks tasks/cancel cancelled.
func (s *TaskServer) Cancelled() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.cancelled...)
}

// Deleted are the sessions a DELETE ended.
func (s *TaskServer) Deleted() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.deleted...)
}

func (s *TaskServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	switch r.Method {
	case http.MethodDelete:
		s.mu.Lock()
		delete(s.sessions, sid)
		s.deleted = append(s.deleted, sid)
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		return
	case http.MethodPost:
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err != nil || json.Unmarshal(body, &req) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.methods = append(s.methods, req.Method)
	if req.Method == "initialize" {
		s.next++
		sid = "session-" + strconv.Itoa(s.next)
		s.sessions[sid] = map[string]*fakeTask{}
		w.Header().Set("Mcp-Session-Id", sid)
		taskAnswer(w, req.ID, map[string]any{"protocolVersion": "2025-11-25", "serverInfo": map[string]any{"name": "tasks", "version": "1"},
			"capabilities": map[string]any{"tools": map[string]any{}, "tasks": map[string]any{"cancel": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}}})
		return
	}
	tasks, ok := s.sessions[sid]
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if len(req.ID) == 0 { // a notification
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var p struct {
		TaskID    string         `json:"taskId"`
		Arguments map[string]any `json:"arguments"`
		Task      *struct{}      `json:"task"`
		Meta      struct {
			ProgressToken any `json:"progressToken"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(req.Params, &p)
	t := tasks[p.TaskID]
	switch {
	case req.Method == "tools/list":
		taskAnswer(w, req.ID, map[string]any{"tools": []any{map[string]any{"name": "research", "inputSchema": map[string]any{"type": "object"},
			"execution": map[string]any{"taskSupport": "required"}}}})
	case req.Method == "tools/call" && p.Task == nil:
		taskFail(w, req.ID, -32601, "research requires a task")
	case req.Method == "tools/call":
		s.next++
		id := "task-" + strconv.Itoa(s.next)
		topic, _ := p.Arguments["topic"].(string)
		tasks[id] = &fakeTask{topic: topic, status: "working", token: p.Meta.ProgressToken}
		taskAnswer(w, req.ID, map[string]any{"task": taskState(id, tasks[id])})
	case t == nil:
		taskFail(w, req.ID, -32602, "unknown task "+p.TaskID)
	case req.Method == "tasks/get":
		if t.status == "working" {
			t.polls++
			if t.polls > s.Polls {
				t.status = "completed"
				if s.FailWith != "" {
					t.status, t.message = "failed", s.FailWith
				}
			}
		}
		if t.token != nil && t.status == "working" {
			taskProgress(w, req.ID, taskState(p.TaskID, t), map[string]any{"progressToken": t.token, "progress": t.polls, "total": s.Polls + 1, "message": "poll " + strconv.Itoa(t.polls)})
			return
		}
		taskAnswer(w, req.ID, taskState(p.TaskID, t))
	case req.Method == "tasks/result":
		taskAnswer(w, req.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "report: " + t.topic}}})
	case req.Method == "tasks/cancel":
		t.status = "cancelled"
		s.cancelled = append(s.cancelled, p.TaskID)
		taskAnswer(w, req.ID, taskState(p.TaskID, t))
	default:
		taskFail(w, req.ID, -32601, "no method "+req.Method)
	}
}

// taskState is a task as tasks/get answers it.
func taskState(id string, t *fakeTask) map[string]any {
	st := map[string]any{"taskId": id, "status": t.status, "ttl": nil, "createdAt": "2026-12-07T00:00:00Z", "lastUpdatedAt": "2026-12-07T00:00:00Z", "pollInterval": 1}
	if t.message != "" {
		st["statusMessage"] = t.message
	}
	return st
}

func taskAnswer(w http.ResponseWriter, id json.RawMessage, result any) {
	w.Header().Set("Content-Type", "application/json")
	data, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	_, _ = w.Write(data)
}

// taskProgress answers on an event stream: a notifications/progress with
// params progress, then the answer.
func taskProgress(w http.ResponseWriter, id json.RawMessage, result, progress any) {
	w.Header().Set("Content-Type", "text/event-stream")
	note, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress", "params": progress})
	answer, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	_, _ = fmt.Fprintf(w, "event: message\ndata: %s\n\nevent: message\ndata: %s\n\n", note, answer)
}

func taskFail(w http.ResponseWriter, id json.RawMessage, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, id, code, msg)
}
