package session_test

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/secrets"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/fakes"
)

// taskAnswers is an actor that takes a task call's answers: the task it
// created, its progress, then its result.
type taskAnswers struct {
	pid      *actor.PID
	created  chan session.TaskCreated
	progress chan session.CallProgress
	results  chan session.ToolResult
}

func newTaskAnswers(e *actor.Engine) *taskAnswers {
	a := &taskAnswers{created: make(chan session.TaskCreated, 4), progress: make(chan session.CallProgress, 16), results: make(chan session.ToolResult, 4)}
	a.pid = e.SpawnFunc(func(c *actor.Context) {
		switch m := c.Message().(type) {
		case session.TaskCreated:
			a.created <- m
		case session.CallProgress:
			a.progress <- m
		case session.ToolResult:
			a.results <- m
		}
	}, "answers")
	return a
}

// next is the next value of ch, within patience.
func next[T any](t *testing.T, ch chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(patience):
		t.Fatalf("no answer within %s", patience)
	}
	var zero T
	return zero
}

// taskSession spawns a session actor of an HTTP connection to url.
func taskSession(t *testing.T, e *actor.Engine, url string, keys session.Sealer) *actor.PID {
	t.Helper()
	conn := config.Connection{Kind: "mcp", ID: connID, Transport: config.Transport{Kind: config.TransportHTTP, URL: url}}
	opts := testOptions()
	opts.Sealer = keys
	pid := e.Spawn(session.New(conn, session.HTTP{}, opts), "session")
	t.Cleanup(func() { stop(t, e, pid) })
	return pid
}

// research is a call of the fake's task tool on topic, answered to to.
func research(to *taskAnswers, topic string, task *session.TaskCall) session.CallTool {
	return session.CallTool{Connection: connID, Tool: "research", Arguments: []byte(`{"topic":"` + topic + `"}`), Owner: "run_1",
		Deadline: time.Now().Add(patience), Reply: reply.At(to.pid, 7), Task: task}
}

// taskServer serves a fake task server whose tasks end after polls polls.
func taskServer(t *testing.T, polls int) (*fakes.TaskServer, string) {
	upstream := fakes.NewTaskServer(polls)
	srv := httptest.NewServer(upstream)
	t.Cleanup(srv.Close)
	return upstream, srv.URL
}

func TestATaskToolIsListedAndItsTaskPolledToItsResult(t *testing.T) {
	is := is.New(t)
	upstream, url := taskServer(t, 2)
	e := newEngine(t)
	pid := taskSession(t, e, url, nil)

	w := expect[session.CatalogListed](e)
	e.Send(pid, session.ListCatalog{Deadline: time.Now().Add(patience), Reply: w.To()})
	listed := await(t, w)
	is.NoErr(listed.Error.Err())
	is.Equal(listed.Snapshot.Tools[0].TaskSupport, catalog.TaskRequired) // the catalog keeps execution.taskSupport

	to := newTaskAnswers(e)
	e.Send(pid, research(to, "tides", &session.TaskCall{Tell: true}))
	created := next(t, to.created)
	is.Equal(created.CorrelationID, uint64(7))
	is.True(created.Task.ID != "")      // the task is told before the answer
	is.True(created.Task.Session != "") // with the session that made it
	r := next(t, to.results)
	is.NoErr(r.Error.Err())
	is.Equal(r.TaskID, created.Task.ID)
	is.Equal(fakes.ToolOutput(t, r), map[string]any{"content": []any{map[string]any{"type": "text", "text": "report: tides"}}}) // the task's result, not the CreateTaskResult
	methods := upstream.Methods()
	is.Equal(methods[len(methods)-5:], []string{"tools/call", "tasks/get", "tasks/get", "tasks/get", "tasks/result"}) // polled until done, then its result fetched
}

func TestATasksProgressReachesItsCallerAsACallsDoes(t *testing.T) {
	is := is.New(t)
	_, url := taskServer(t, 2) // two polls find it working, each reports
	e := newEngine(t)
	pid := taskSession(t, e, url, nil)
	to := newTaskAnswers(e)
	call := research(to, "tides", &session.TaskCall{})
	call.Reports = true
	e.Send(pid, call)
	r := next(t, to.results)
	is.NoErr(r.Error.Err())
	var last session.CallProgress
	for len(to.progress) > 0 { // what came before the result
		last = <-to.progress
	}
	is.Equal(last, session.CallProgress{CorrelationID: 7, Progress: 2, Total: 3, Message: "poll 2"}) // under the call's progressToken, the task's last progress
}

func TestAFailedTaskFailsTheCallWithItsStatusMessage(t *testing.T) {
	is := is.New(t)
	upstream, url := taskServer(t, 0)
	upstream.FailWith = "no sources found"
	e := newEngine(t)
	pid := taskSession(t, e, url, nil)
	to := newTaskAnswers(e)
	e.Send(pid, research(to, "x", &session.TaskCall{}))
	r := next(t, to.results)
	is.True(errors.Is(r.Error.Err(), session.ErrTaskFailed)) // task_failed
	is.Equal(r.Error.Code, "task_failed")
	is.True(strings.Contains(r.Error.Message, "no sources found")) // with the task's status message
}

func TestACancelledCallCancelsItsTaskAndAHaltedOneLeavesIt(t *testing.T) {
	is := is.New(t)
	upstream, url := taskServer(t, 1<<30) // never done
	e := newEngine(t)
	pid := taskSession(t, e, url, nil)
	to := newTaskAnswers(e)

	e.Send(pid, research(to, "x", &session.TaskCall{Tell: true}))
	first := next(t, to.created).Task.ID
	e.Send(pid, session.CancelCalls{Connection: connID, Owner: "run_1"})
	is.True(next(t, to.results).Error != nil)
	is.Equal(upstream.Cancelled(), []string{first}) // the owner's cancel cancels the task upstream

	e.Send(pid, research(to, "y", &session.TaskCall{Tell: true}))
	second := next(t, to.created).Task.ID
	e.Send(pid, session.CancelCalls{Connection: connID, Owner: "run_1", KeepTasks: true})
	is.True(next(t, to.results).Error != nil)
	is.True(second != first)
	is.Equal(upstream.Cancelled(), []string{first}) // a halt leaves its task running
}

func TestATaskOfAnEarlierProcessIsPolledOnItsOwnSession(t *testing.T) {
	is := is.New(t)
	upstream, url := taskServer(t, 3)
	keys, err := secrets.Ephemeral()
	is.NoErr(err)

	// The first process creates the task and stops while it runs.
	e := newEngine(t)
	first := taskSession(t, e, url, keys)
	to := newTaskAnswers(e)
	e.Send(first, research(to, "kelp", &session.TaskCall{Tell: true}))
	ref := next(t, to.created).Task
	is.True(ref.Upstream != "")                         // the session id is kept, sealed
	is.True(!strings.Contains(ref.Upstream, "session")) // never in clear
	stop(t, e, first)
	is.True(errors.Is(next(t, to.results).Error.Err(), session.ErrUnavailable)) // the call is cut off
	is.Equal(upstream.Deleted(), []string(nil))                                 // but no DELETE ended its session
	is.Equal(upstream.Cancelled(), []string(nil))                               // nor was its task cancelled

	// The next process polls the same task on that session.
	e2 := newEngine(t)
	second := taskSession(t, e2, url, keys)
	to2 := newTaskAnswers(e2)
	e2.Send(second, research(to2, "kelp", &session.TaskCall{Tell: true, Resume: &ref}))
	r := next(t, to2.results)
	is.NoErr(r.Error.Err())
	is.Equal(r.TaskID, ref.ID)
	is.Equal(fakes.ToolOutput(t, r)["content"], []any{map[string]any{"type": "text", "text": "report: kelp"}}) // the task's own result

	// Without the key the task cannot be reached: lost, a session_lost.
	e3 := newEngine(t)
	third := taskSession(t, e3, url, nil)
	to3 := newTaskAnswers(e3)
	e3.Send(third, research(to3, "kelp", &session.TaskCall{Resume: &ref}))
	lost := next(t, to3.results)
	is.Equal(lost.Error.Code, "task_lost")
	is.True(errors.Is(lost.Error.Err(), session.ErrSessionLost))
}
