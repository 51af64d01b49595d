package service

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcpflow/mcpflow/actors/guard"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/run"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// storeTimeout bounds each store write a run makes, and cancelWait how
// long a cancel waits for a live run to commit its end.
const (
	storeTimeout = 10 * time.Second
	cancelWait   = 10 * time.Second
)

func (s *Service) startRun(ctx context.Context, p protocol.StartRunParams) (protocol.RunResult, error) {
	pr, err := s.prepare(ctx, p.DeploymentID)
	if err != nil {
		return protocol.RunResult{}, err
	}
	d, a := pr.deployment, pr.artifact
	if first, failed := firstError(pr.diags); failed {
		return protocol.RunResult{
			DeploymentID: d.ID, ArtifactID: a.ID, ArtifactVersion: a.Version, Status: "unrunnable",
			Diagnostics: pr.diags, NextActions: nextActions(true, nil, ptr(protocol.MethodDeploymentsValidate), "The deployment cannot run: fix its error diagnostics ("+first.Code+").", nil),
		}, nil
	}
	input := orEmpty(p.WorkflowInput)
	if err := cmp.Or(pr.inputErr, pr.input.Validate(input)); err != nil {
		return protocol.RunResult{}, invalidParams("invalid params: workflow input does not match the input schema: %v", err)
	}
	if pr.setupErr != nil {
		return protocol.RunResult{}, pr.setupErr
	}
	rec, err := s.newRun(d, a, input, pr.stored)
	if err != nil {
		return protocol.RunResult{}, err
	}
	rec.StartedBy = startedBy(ctx)
	return s.execute(ctx, rec, pr.setup, nil, p.TraceRange, p.Wait == nil || *p.Wait)
}

// execute spawns the run actor of rec and answers once its first record
// is committed and, when wait is set, up to RunWait, it has stopped
// (finished or interrupted); a run still executing is answered as it
// stands and goes on.
func (s *Service) execute(ctx context.Context, rec store.Run, setup runSetup, resume *run.Resume, tr *protocol.TraceRange, wait bool) (protocol.RunResult, error) {
	started, done := reply.Expect[run.Started](s.Replies), reply.Expect[run.Stopped](s.Replies)
	defer started.Close()
	defer done.Close() // a run that outlives the wait answers nobody
	if err := s.spawnRun(rec, setup, resume, started.To(), done.To()); err != nil {
		return protocol.RunResult{}, err
	}

	// Nothing is acknowledged before the run's record is committed.
	ack, err := started.Wait(ctx)
	if err != nil {
		return protocol.RunResult{}, fmt.Errorf("run %s: %w", rec.ID, err)
	}
	if err := ack.Error.Err(); errors.Is(err, workflow.ErrResume) {
		return protocol.RunResult{}, invalidParams("invalid params: %v", err)
	} else if err != nil {
		return protocol.RunResult{}, upstream("%v", err)
	}
	current := ack.Run
	if s.RunWait > 0 && wait {
		wctx, cancel := context.WithTimeout(ctx, s.RunWait)
		defer cancel()
		// A shutdown ends the wait too: the answer is the run as it stands.
		defer context.AfterFunc(s.life.stopping(), cancel)()
		if final, err := done.Wait(wctx); err == nil {
			current = final.Run
		} else if ctx.Err() != nil {
			return protocol.RunResult{}, fmt.Errorf("run %s: %w", rec.ID, ctx.Err())
		} else if stored, err := s.Store.GetRun(ctx, rec.ID); err == nil {
			current = stored
		}
	}
	return s.runResult(ctx, current, tr)
}

// launch continues a recovered run in the background.
func (s *Service) launch(rec store.Run, setup runSetup) error {
	s.recordRunRecovered(rec)
	return s.spawnRun(rec, setup, nil, reply.Address{}, reply.Address{})
}

// spawnRun starts the actor of one incarnation of a run (its start, a
// resume, a recovery). Each incarnation is its own actor, so that a new
// one never waits for the last one's name; live maps the run id to the
// incarnation running now. The run answers started and done (either may
// be the zero Address). Once the service stops accepting runs it spawns
// nothing and refuses with -32000.
func (s *Service) spawnRun(rec store.Run, setup runSetup, resume *run.Resume, started, done reply.Address) error {
	if !s.life.admit() {
		return errShuttingDown()
	}
	engine := s.Engine
	incarnation := &liveRun{}
	s.live.Store(rec.ID, incarnation)
	var stopped sync.Once
	release := func() {
		// Counted out last: once every run is, none writes the store.
		defer stopped.Do(s.life.runs.Done)
		s.live.CompareAndDelete(rec.ID, incarnation)
	}
	pid := s.Engine.Spawn(run.New(run.Spec{
		Record: rec, Program: setup.program, Targets: setup.targets, Sources: setup.sources, Scopes: setup.scopes(rec), Options: setup.options,
		Resume: resume, Deadline: setup.deadline(s.now()),
		Supervisor: s.Supervisor.PID(), Store: s.Store,
		CallTimeout: s.CallTimeout, StoreTimeout: storeTimeout, Started: started, Done: done, Release: release, Metrics: s.Metrics,
	}), runKind, actor.WithID(fmt.Sprintf("%s.%d", rec.ID, s.incarnations.Add(1))), actor.WithInboxSize(runInbox),
		actor.WithMiddleware(guard.Recover(func(p guard.Panic) { engine.Send(p.PID, p) })))
	incarnation.pid.Store(pid)
	return nil
}

// runKind is the actor kind of run actors; their id is the run id and
// an incarnation number.
const runKind = "run"

// runInbox is the initial size of a run actor's inbox: a run has a few
// messages waiting at a time (a commit done, its calls' results, a
// cancel), and hollywood's inbox grows when full. The default (1,024
// slots, 24 KiB) was most of what a run start allocated.
const runInbox = 16

// liveRun is the actor of a run's current incarnation; its pid is set
// once spawned.
type liveRun struct{ pid atomic.Pointer[actor.PID] }

func (s *Service) resumeRun(ctx context.Context, p protocol.ResumeRunParams) (protocol.RunResult, error) {
	if _, busy := s.resuming.LoadOrStore(p.RunID, true); busy {
		return protocol.RunResult{}, invalid("workflow run %q is being resumed", p.RunID)
	}
	defer s.resuming.Delete(p.RunID)
	r, err := s.Store.GetRun(ctx, p.RunID)
	if err != nil {
		return protocol.RunResult{}, storeErr(err, fmt.Sprintf("workflow run %q", p.RunID))
	}
	if r.Status != store.RunInterrupted || r.Checkpoint == nil {
		return protocol.RunResult{}, invalid("workflow run %q is not interrupted", p.RunID)
	}
	a, err := s.artifact(ctx, r.ArtifactID, r.ArtifactVersion)
	if err != nil {
		return protocol.RunResult{}, storeErr(err, fmt.Sprintf("artifact %s v%d of run %q", r.ArtifactID, r.ArtifactVersion, r.ID))
	}
	// The run resumes in the environment it was pinned to.
	setup, err := s.setup(ctx, r.Deployment, a)
	if err != nil {
		return protocol.RunResult{}, err
	}
	resume := &run.Resume{Outcome: deref(p.ResumeOutcome), Payload: p.ResumePayload}
	if err := tryResume(setup, *r.Checkpoint, resume); err != nil {
		return protocol.RunResult{}, err
	}
	return s.execute(ctx, r, setup, resume, p.TraceRange, true)
}

// tryResume checks a resume against a copy of the checkpoint, so that a
// refused one is answered -32602 before any actor starts.
func tryResume(setup runSetup, cp workflow.Snapshot, resume *run.Resume) error {
	var copied workflow.Snapshot
	if err := remarshal(cp, &copied); err != nil {
		return fmt.Errorf("copy checkpoint: %w", err)
	}
	exec, err := workflow.Restore(setup.program, copied, setup.options)
	if err != nil {
		return invalid("%v", err)
	}
	if err := exec.Resume(resume.Outcome, resume.Payload); err != nil {
		return invalidParams("invalid params: %v", err)
	}
	return nil
}

// newRun builds the record of a run about to start; diags are its
// deployment's dependency diagnostics as the record keeps them.
func (s *Service) newRun(d store.Deployment, a store.Artifact, input workflow.Object, diags []workflow.Object) (store.Run, error) {
	id, err := newRunID()
	if err != nil {
		return store.Run{}, err
	}
	now := s.now().UTC()
	return store.Run{
		ID: id, DeploymentID: d.ID, ArtifactID: a.ID, ArtifactVersion: a.Version,
		Status: store.RunRunning, ResumeReadiness: "not_applicable", Input: input, Deployment: d,
		Diagnostics: diags, CreatedAt: now, UpdatedAt: now,
	}, nil
}

// startedBy names the caller a request acts for, as a run records it:
// its token's name, or "local" where the server has no tokens (and so
// serves loopback clients only).
func startedBy(ctx context.Context) string {
	p, ok := access.PrincipalFrom(ctx)
	if !ok || p.IsAnonymous() {
		return "local"
	}
	return p.Name
}

func newRunID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("run id: %w", err)
	}
	return "run_" + hex.EncodeToString(b[:]), nil
}

func (s *Service) inspectRun(ctx context.Context, p protocol.RunIDParams) (protocol.RunResult, error) {
	r, err := s.Store.GetRun(ctx, p.RunID)
	if err != nil {
		return protocol.RunResult{}, storeErr(err, fmt.Sprintf("workflow run %q", p.RunID))
	}
	return s.runResult(ctx, r, nil)
}

func (s *Service) readTrace(ctx context.Context, p protocol.TraceParams) (protocol.RunResult, error) {
	r, err := s.Store.GetRun(ctx, p.RunID)
	if err != nil {
		return protocol.RunResult{}, storeErr(err, fmt.Sprintf("workflow run %q", p.RunID))
	}
	return s.runResult(ctx, r, &p.TraceRange)
}

// runResult projects a run record, with a trace slice when asked.
func (s *Service) runResult(ctx context.Context, r store.Run, tr *protocol.TraceRange) (protocol.RunResult, error) {
	diags := make([]protocol.DependencyDiag, 0, len(r.Diagnostics))
	for _, obj := range r.Diagnostics {
		var dg protocol.DependencyDiag
		if err := remarshal(obj, &dg); err == nil {
			diags = append(diags, dg)
		}
	}
	res := protocol.RunResult{
		DeploymentID: r.DeploymentID, ArtifactID: r.ArtifactID, ArtifactVersion: r.ArtifactVersion,
		Status: r.Status, RunID: &r.ID, ResumeReadiness: &r.ResumeReadiness,
		Outcome: r.Outcome, Error: r.Error, Output: r.Output, Diagnostics: diags,
		TraceCount: r.TraceCount, NextActions: afterRun(r), StartedBy: r.StartedBy,
	}
	if r.Interrupt != nil {
		obj, err := toObject(r.Interrupt)
		if err != nil {
			return res, err
		}
		res.Interrupt = obj
	}
	if tr == nil {
		return res, nil
	}
	start, limit := 0, 20
	if tr.Start != nil {
		start = *tr.Start
	}
	if tr.Limit != nil {
		limit = *tr.Limit
	}
	trace, err := s.Store.ReadTrace(ctx, r.ID, start, limit)
	if err != nil {
		return res, storeErr(err, fmt.Sprintf("trace of run %q", r.ID))
	}
	truncated := r.TraceCount > start+limit
	res.Trace, res.TraceStart, res.TraceLimit, res.TraceTruncated = each(trace, apiTraceEntry), &start, &limit, &truncated
	return res, nil
}

// afterRun advises what to do after a run.
func afterRun(r store.Run) protocol.NextActions {
	switch r.Status {
	case store.RunFailed:
		return nextActions(true, nil, ptr(protocol.MethodRunsTrace), "The run failed; read its trace to see which step failed and why.",
			[]protocol.PatchExample{{Description: "Read the first trace entries.", Tool: protocol.MethodRunsTrace,
				Request: protocol.Object{"run_id": r.ID, "trace_range": protocol.Object{"start": 0, "limit": 25}}}})
	case store.RunInterrupted:
		return nextActions(true, nil, ptr(protocol.MethodRunsResume), "The run waits for a resume payload.", nil)
	case store.RunRunning:
		return nextActions(true, nil, ptr(protocol.MethodRunsInspect), "The run is still executing; inspect it again later.", nil)
	default:
		return nextActions(false, nil, nil, "The run "+r.Status+".", nil)
	}
}

func (s *Service) listRuns(ctx context.Context, p protocol.ListRunsParams) (protocol.ListRunsResult, error) {
	offset, limit, err := paging(p.Cursor, p.Limit, 50)
	if err != nil {
		return protocol.ListRunsResult{}, err
	}
	runs, total, err := s.Store.ListRuns(ctx, store.RunQuery{Status: deref(p.Status), Offset: offset, Limit: limit})
	if err != nil {
		return protocol.ListRunsResult{}, storeErr(err, "runs")
	}
	rows := make([]protocol.RunSummary, 0, len(runs))
	for _, r := range runs {
		rows = append(rows, protocol.RunSummary{
			RunID: r.ID, DeploymentID: r.DeploymentID, ArtifactID: r.ArtifactID, ArtifactVersion: r.ArtifactVersion,
			Status: r.Status, ResumeReadiness: r.ResumeReadiness, DiagnosticCount: len(r.Diagnostics),
			CreatedAt: r.CreatedAt.UTC().Format(time.RFC3339Nano), UpdatedAt: r.UpdatedAt.UTC().Format(time.RFC3339Nano),
		})
	}
	return protocol.ListRunsResult{Runs: rows, Total: total, Cursor: p.Cursor, NextCursor: nextCursor(offset+len(runs), total), Limit: limit}, nil
}
