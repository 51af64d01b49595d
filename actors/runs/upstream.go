package runs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/run"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// answerWait is how long a resume of an upstream interrupt waits for the
// live run to take its answer.
const answerWait = 10 * time.Second

// waitsUpstream reports whether r is interrupted by a request an upstream
// server sent during one of its calls: its actor is live, its call out
// (or, for an input request a stateless-era server answered a call
// with, other calls of the run are out). A run parked on input requests
// alone (run.Parked) has no live actor: it resumes as from a workflow
// interrupt.
func waitsUpstream(r store.Run) bool {
	return r.Status == store.RunInterrupted && r.Interrupt != nil && run.IsUpstreamKind(r.Interrupt.Kind) && !run.Parked(r)
}

// resumeUpstream answers the upstream request run r is interrupted with,
// through its live actor, on this node or another (each peer's desk is
// asked; the one that runs it hands the answer on), and answers as Resume
// does: once the run took the answer and, up to req.Wait, stopped or
// paused again.
func (m *Manager) resumeUpstream(ctx context.Context, r store.Run, req ResumeRequest) (store.Run, error) {
	taken, done := reply.Expect[run.Resumed](m.cfg.Replies), reply.Expect[run.Stopped](m.cfg.Replies)
	defer taken.Close()
	defer done.Close()
	answer := run.AnswerInterrupt{InterruptID: r.Interrupt.ID, Outcome: req.Outcome, Payload: req.Payload, Reply: taken.To()}
	if req.Wait > 0 {
		answer.Done = done.To()
	}
	switch pid := m.liveRun(r.ID); {
	case pid != nil:
		m.cfg.Engine.Send(pid, answer)
	case m.cfg.Nodes != nil:
		for _, desk := range m.cfg.Nodes.Peers() {
			m.cfg.Engine.Send(desk, run.AnswerByID{RunID: r.ID, Answer: answer})
		}
	}
	actx, cancel := context.WithTimeout(ctx, answerWait)
	defer cancel()
	ack, err := taken.Wait(actx)
	switch {
	case err != nil && ctx.Err() != nil:
		return store.Run{}, fmt.Errorf("resume run %s: %w", r.ID, err)
	case err != nil:
		return store.Run{}, invalid("workflow run %q waits on an upstream %s request, but no live run took the answer within %s: the process that ran it stopped, and the request died with its session; the run is recovered at the next start of its node",
			r.ID, r.Interrupt.Kind, answerWait)
	}
	if err := ack.Error.Err(); errors.Is(err, workflow.ErrResume) {
		return store.Run{}, invalidParams("invalid params: %v", err)
	} else if err != nil {
		return store.Run{}, failure(Upstream, "%v", err)
	}
	if req.Wait <= 0 {
		return ack.Run, nil
	}
	wctx, cancelWait := context.WithTimeout(ctx, req.Wait)
	defer cancelWait()
	defer context.AfterFunc(m.life.stopping(), cancelWait)()
	if final, err := done.Wait(wctx); err == nil {
		return final.Run, nil
	}
	if stored, err := m.cfg.Store.GetRun(ctx, r.ID); err == nil {
		return stored, nil
	}
	return ack.Run, nil
}
