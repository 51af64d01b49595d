package service

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/mcpflow/mcpflow/actors/jsonconv"
	"github.com/mcpflow/mcpflow/actors/paging"
	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// runMethods are workflow.runs.*: start (bounded server-wide,
// startingRuns), inspect, list, trace, resume, cancel, and the
// subscriptions to a run's live events (live.go).
func (s *Service) runMethods() map[string]rpc.Method {
	return map[string]rpc.Method{
		protocol.MethodRunsStart:              s.startingRuns(forRun(s.startRun)),
		protocol.MethodRunsPassthrough:        s.startingRuns(forRun(s.passthrough)),
		protocol.MethodRunsPassthroughRelease: forRun(s.releaseClient),
		protocol.MethodRunsInspect:            forRead(s.inspectRun),
		protocol.MethodRunsList:               forRead(s.listRuns),
		protocol.MethodRunsTrace:              forRead(s.readTrace),
		protocol.MethodRunsResume:             forRun(s.resumeRun),
		protocol.MethodRunsCancel:             forRun(s.cancelRun),
		protocol.MethodRunsRerun:              s.startingRuns(forRun(s.rerunRun)),
		protocol.MethodRunsFork:               s.startingRuns(forRun(s.forkRun)),
		protocol.MethodRunsSubscribe:          pushing(forRead(s.subscribeRun)),
		protocol.MethodRunsUnsubscribe:        pushing(forRead(s.unsubscriber(false))),
	}
}

// DefaultMaxConcurrentRuns bounds the workflow.runs.start calls running
// at once, server-wide, when the Service sets no MaxConcurrentRuns
// (server.edge.max_concurrent_runs).
const DefaultMaxConcurrentRuns = 256

// startingRuns bounds m, the workflow.runs.start entry, to
// MaxConcurrentRuns calls at once across the server: the edge refuses a
// start past it at once (-32000 "too many runs starting at once"). It
// counts calls, not runs: a start that answered after RunWait leaves its
// run running without holding a place.
func (s *Service) startingRuns(m rpc.Method) rpc.Method {
	m.MaxConcurrent = cmp.Or(max(s.MaxConcurrentRuns, 0), DefaultMaxConcurrentRuns)
	m.Busy = "runs starting"
	return m
}

// storeTimeout bounds each store write the service makes in the
// background (the hub's).
const storeTimeout = 10 * time.Second

func (s *Service) startRun(ctx context.Context, p protocol.StartRunParams) (protocol.RunResult, error) {
	wait := s.runWait(p.Wait)
	started, err := s.Runs.Start(ctx, runs.StartRequest{DeploymentID: p.DeploymentID, Input: p.WorkflowInput, StartedBy: startedBy(ctx),
		ClientSampling: deref(p.ClientSampling), Wait: wait, IdempotencyKey: deref(p.IdempotencyKey)})
	return s.startResult(ctx, started, err, p.TraceRange)
}

// runWait is how long a start waits for its run: RunWait, or nothing
// when the caller said wait false.
func (s *Service) runWait(wait *bool) time.Duration {
	if wait != nil && !*wait {
		return 0
	}
	return s.RunWait
}

// startResult projects a run start as workflow.runs.start answers it
// (rerun and fork too): the run, or the deployment that cannot run.
func (s *Service) startResult(ctx context.Context, started runs.StartResult, err error, tr *protocol.TraceRange) (protocol.RunResult, error) {
	if err != nil {
		return protocol.RunResult{}, runsErr(err)
	}
	if pr := started.Unrunnable; pr != nil {
		first, _ := runs.FirstError(pr.Diagnostics)
		d, a := pr.Deployment, pr.Artifact
		return protocol.RunResult{
			DeploymentID: d.ID, ArtifactID: a.ID, ArtifactVersion: a.Version, Status: "unrunnable",
			Diagnostics: dependencyDiags(pr.Diagnostics), NextActions: nextActions(true, nil, ptr(protocol.MethodDeploymentsValidate), "The deployment cannot run: fix its error diagnostics ("+first.Code+").", nil),
		}, nil
	}
	res, err := s.runResult(ctx, started.Run, tr)
	res.Deduplicated = started.Deduplicated
	return res, err
}

// rerunRun starts a new run of a run's deployment on its input
// (workflow.runs.rerun).
func (s *Service) rerunRun(ctx context.Context, p protocol.RerunRunParams) (protocol.RunResult, error) {
	started, err := s.Runs.Rerun(ctx, runs.RerunRequest{RunID: p.RunID, ArtifactVersion: deref(p.ArtifactVersion), StartedBy: startedBy(ctx), Wait: s.runWait(p.Wait)})
	return s.startResult(ctx, started, err, p.TraceRange)
}

// forkRun starts a new run that replays a run up to a step and executes
// from there (workflow.runs.fork).
func (s *Service) forkRun(ctx context.Context, p protocol.ForkRunParams) (protocol.RunResult, error) {
	started, err := s.Runs.Fork(ctx, runs.ForkRequest{RunID: p.RunID, FromNode: p.FromNode, StartedBy: startedBy(ctx), Wait: s.runWait(p.Wait)})
	return s.startResult(ctx, started, err, p.TraceRange)
}

func (s *Service) resumeRun(ctx context.Context, p protocol.ResumeRunParams) (protocol.RunResult, error) {
	r, err := s.Runs.Resume(ctx, runs.ResumeRequest{RunID: p.RunID, Outcome: deref(p.ResumeOutcome), Payload: p.ResumePayload, Wait: s.RunWait})
	if err != nil {
		return protocol.RunResult{}, runsErr(err)
	}
	return s.runResult(ctx, r, p.TraceRange)
}

// cancelRun ends a run as cancelled: a running one through its actor,
// which cancels its calls upstream, on this node or on another; an
// interrupted one in the store.
func (s *Service) cancelRun(ctx context.Context, p protocol.CancelRunParams) (protocol.RunResult, error) {
	r, err := s.Runs.Cancel(ctx, p.RunID, deref(p.Reason))
	if err != nil {
		return protocol.RunResult{}, runsErr(err)
	}
	return s.runResult(ctx, r, nil)
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
		if err := jsonconv.Strict(obj, &dg); err == nil {
			diags = append(diags, dg)
		}
	}
	res := protocol.RunResult{
		DeploymentID: r.DeploymentID, ArtifactID: r.ArtifactID, ArtifactVersion: r.ArtifactVersion,
		Status: r.Status, RunID: &r.ID, ResumeReadiness: &r.ResumeReadiness,
		Outcome: r.Outcome, Error: r.Error, Output: r.Output, Diagnostics: diags,
		TraceCount: r.TraceCount, NextActions: afterRun(r), StartedBy: r.StartedBy, Kind: r.Kind,
		ParentRunID: r.ParentRunID, ForkedFromNode: r.ForkedFromNode,
		CreatedAt: r.CreatedAt.UTC().Format(time.RFC3339Nano), UpdatedAt: r.UpdatedAt.UTC().Format(time.RFC3339Nano),
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
	w, err := runs.ReadTrace(ctx, s.Store, r, tr.Start, tr.Limit)
	if err != nil {
		return res, runsErr(err)
	}
	res.Trace, res.TraceStart, res.TraceLimit, res.TraceTruncated = each(w.Entries, apiTraceEntry), &w.Start, &w.Limit, &w.Truncated
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
	offset, limit, err := pageParams(p.Cursor, p.Limit, 50)
	if err != nil {
		return protocol.ListRunsResult{}, err
	}
	runs, total, err := s.Store.ListRuns(ctx, store.RunQuery{Status: deref(p.Status), DeploymentID: deref(p.DeploymentID), Offset: offset, Limit: limit})
	if err != nil {
		return protocol.ListRunsResult{}, storeErr(err, "runs")
	}
	rows := make([]protocol.RunSummary, 0, len(runs))
	for _, r := range runs {
		rows = append(rows, protocol.RunSummary{
			RunID: r.ID, DeploymentID: r.DeploymentID, ArtifactID: r.ArtifactID, ArtifactVersion: r.ArtifactVersion,
			Status: r.Status, ResumeReadiness: r.ResumeReadiness, DiagnosticCount: len(r.Diagnostics),
			CreatedAt: r.CreatedAt.UTC().Format(time.RFC3339Nano), UpdatedAt: r.UpdatedAt.UTC().Format(time.RFC3339Nano),
			StartedBy: r.StartedBy, Kind: r.Kind, ParentRunID: r.ParentRunID, ForkedFromNode: r.ForkedFromNode,
		})
	}
	return protocol.ListRunsResult{Runs: rows, Total: total, Cursor: p.Cursor, NextCursor: paging.Next(offset+len(runs), total), Limit: limit}, nil
}
