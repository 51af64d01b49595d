package run

import (
	"log/slog"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// A step whose tool runs as an upstream MCP task (asTask) sends its call
// with a session.TaskCall. The session tells the run the task as soon as
// it is created (session.TaskCreated): the run records it in the call of
// its checkpoint (workflow.Call.Task) and commits, so that a restart
// finds it and the recovered run's first attempt polls that task instead
// of calling the tool again. Any later attempt in one incarnation (a
// step retry, a call sent again after its session was lost) makes a new
// task.

// asTask reports whether the call of capability on target is made as a
// task: its tool's execution.taskSupport is "required", or "optional" and
// its binding says "task": "always".
func (a *Actor) asTask(capability string, target Target) bool {
	if a.spec.Options.Capability == nil || target.Connection == "" || target.Resource {
		return false
	}
	c, ok := a.spec.Options.Capability(capability)
	switch {
	case !ok:
		return false
	case c.TaskSupport == catalog.TaskRequired:
		return true
	}
	return c.TaskSupport == catalog.TaskOptional && target.Task == store.TaskAlways
}

// taskCall is the TaskCall of attempt f (just counted) on target: nil
// for a call that is no task; the task the checkpoint names for the
// first attempt of a recovered call; a new task otherwise.
func (a *Actor) taskCall(f *inflight, target Target) *session.TaskCall {
	if !a.asTask(f.call.Capability, target) {
		return nil
	}
	t := f.call.Task
	if t == nil {
		return &session.TaskCall{Tell: true}
	}
	if f.attempts > 1 {
		a.forgetTask(f)
		return &session.TaskCall{Tell: true}
	}
	return &session.TaskCall{Tell: true, Resume: &session.TaskRef{ID: t.ID, Generation: t.Generation, Session: t.Session, Upstream: t.Upstream, ProtocolVersion: t.ProtocolVersion}}
}

// createdTask is a task recorded in the execution, logged once committed.
type createdTask struct{ step, task string }

// tasksCommitted logs the tasks a commit wrote.
func (a *Actor) tasksCommitted(tasks []createdTask) {
	for _, t := range tasks {
		slog.Info("step runs as an upstream task, recorded in the run's checkpoint", "run", a.record.ID, "step", t.step, "task", t.task)
	}
}

// forgetTask drops the task of f's call: its next attempt makes another.
func (a *Actor) forgetTask(f *inflight) {
	f.call.Task = nil
	if a.exec != nil {
		_ = a.exec.SetTask(f.call.ID, nil) // outstanding while f is
	}
}

// onTaskCreated records the task an attempt's call created in the
// checkpoint, and commits it (at once, or after the commit in progress).
func (a *Actor) onTaskCreated(m session.TaskCreated) {
	id, ok := a.byCorr[m.CorrelationID]
	f := a.calls[id]
	if !ok || f == nil || f.corr != m.CorrelationID || a.exec == nil || a.stopping {
		return // an attempt the run no longer waits for
	}
	t := m.Task
	f.call.Task = &workflow.Task{ID: t.ID, Generation: t.Generation, Session: t.Session, Upstream: t.Upstream, ProtocolVersion: t.ProtocolVersion}
	if err := a.exec.SetTask(id, f.call.Task); err != nil {
		return
	}
	a.taskUnsaved = append(a.taskUnsaved, createdTask{step: f.call.NodeID, task: t.ID})
	if !a.writing && !a.halting {
		a.commit(false, false)
	}
}
