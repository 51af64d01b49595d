package runs

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpflow/mcpflow/actors/run"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// ResumeRequest asks to resume an interrupted run.
type ResumeRequest struct {
	RunID   string
	Outcome string
	Payload workflow.Object
	// Wait is as StartRequest's.
	Wait time.Duration
}

// Resume resumes interrupted run req.RunID, in the environment it was
// pinned to, and answers as Start does. One run resumes once at a time.
func (m *Manager) Resume(ctx context.Context, req ResumeRequest) (store.Run, error) {
	if _, busy := m.resuming.LoadOrStore(req.RunID, true); busy {
		return store.Run{}, invalid("workflow run %q is being resumed", req.RunID)
	}
	defer m.resuming.Delete(req.RunID)
	r, err := m.cfg.Store.GetRun(ctx, req.RunID)
	if err != nil {
		return store.Run{}, storeErr(err, fmt.Sprintf("workflow run %q", req.RunID))
	}
	if r.Status != store.RunInterrupted || r.Checkpoint == nil {
		return store.Run{}, invalid("workflow run %q is not interrupted", req.RunID)
	}
	if waitsUpstream(r) {
		return m.resumeUpstream(ctx, r, req)
	}
	// The run resumes in the environment it was pinned to.
	setup, err := m.runSetup(ctx, r)
	if err != nil {
		return store.Run{}, err
	}
	resume := &run.Resume{Outcome: req.Outcome, Payload: req.Payload}
	if err := tryResume(setup, *r.Checkpoint, r.Interrupt, resume); err != nil {
		return store.Run{}, err
	}
	return m.asMember(ctx, r.ID, func() (store.Run, error) { return m.execute(ctx, r, setup, resume, nil, req.Wait) })
}

// tryResume checks a resume against a copy of the checkpoint, so that a
// refused one is answered InvalidParams before any actor starts.
//
// The answer to an upstream's input request (in, run.IsInputInterrupt)
// is checked as the run actor will take it (run.AnswerInput).
func tryResume(setup *Setup, cp workflow.Snapshot, in *workflow.Interrupt, resume *run.Resume) error {
	var copied workflow.Snapshot
	if err := viaJSON(cp, &copied); err != nil {
		return fmt.Errorf("copy checkpoint: %w", err)
	}
	exec, err := workflow.Restore(setup.program, copied, setup.options)
	if err != nil {
		return invalid("%v", err)
	}
	if run.IsInputInterrupt(in) {
		err = run.AnswerInput(exec, in, resume.Outcome, resume.Payload, setup.options.Validate)
	} else {
		err = exec.Resume(resume.Outcome, resume.Payload)
	}
	if err != nil {
		return invalidParams("invalid params: %v", err)
	}
	return nil
}
