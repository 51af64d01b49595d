package runs

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/run"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// Recovered counts what Recover did with the runs a stop cut off.
type Recovered struct {
	Resumed, Failed int
}

// Recover is called once at start, before serving: every run still
// "running" was cut off by a stop. A run whose calls in flight are all safe
// to repeat (none, built-ins, tools annotated readOnlyHint or
// idempotentHint, or calls whose upstream MCP task the checkpoint names,
// which the run polls again) resumes from its last committed step in the background;
// any other ends failed, its error saying that the outcome of the step in
// flight is unknown. Interrupted runs are not running and stay as they are.
func (m *Manager) Recover(ctx context.Context) (Recovered, error) {
	running, _, err := m.cfg.Store.ListRuns(ctx, store.RunQuery{Status: store.RunRunning})
	if err != nil {
		return Recovered{}, fmt.Errorf("list running runs: %w", err)
	}
	interrupted, _, err := m.cfg.Store.ListRuns(ctx, store.RunQuery{Status: store.RunInterrupted})
	if err != nil {
		return Recovered{}, fmt.Errorf("list interrupted runs: %w", err)
	}
	for _, r := range interrupted {
		if waitsUpstream(r) {
			// Its call died with the process, and the upstream request
			// with the call's session: it is recovered as a running run.
			running = append(running, r)
		}
	}
	return m.RecoverClaimed(ctx, running)
}

// RecoverClaimed recovers runs that a stop cut off, as Recover does:
// in a cluster, the runs a node claimed (store.RunClaimer), its own as it
// starts or a dead node's.
//
// A run interrupted by its server's request (elicitation, sampling) was
// running a call whose request died with the process: it is recovered as
// a running run. That call is made again when it is safe to repeat;
// otherwise it fails with the outcome elicitation_lost, which its step
// may route (run.ErrElicitationLost), and the run goes on from there.
func (m *Manager) RecoverClaimed(ctx context.Context, running []store.Run) (Recovered, error) {
	var got Recovered
	for _, r := range running {
		var lost *workflow.Interrupt
		if waitsUpstream(r) {
			lost = r.Interrupt
			r.Status, r.Interrupt, r.ResumeReadiness = store.RunRunning, nil, "not_applicable"
		}
		setup, asked, why := m.resumable(ctx, r, lost)
		if why == "" {
			if err := m.launch(r, setup, asked); err != nil {
				return got, fmt.Errorf("resume run %s: %w", r.ID, err)
			}
			got.Resumed++
			slog.Info("run resumed after a stop", "run", r.ID, "step", r.CurrentStep, "lost_requests", len(asked))
			continue
		}
		failed := store.RecoveredRun(r, m.now())
		if lost != nil && !run.IsInputInterrupt(lost) {
			msg := fmt.Sprintf("%s: mcpflow stopped while step %q waited on an upstream %s request, which died with its session; %s", CodeElicitationLost, lost.NodeID, lost.Kind, why)
			failed.Error = &msg
		}
		if err := m.cfg.Store.RecordProgress(ctx, failed, nil); err != nil {
			return got, fmt.Errorf("recover run %s: %w", r.ID, err)
		}
		got.Failed++
		slog.Warn("run cut off by a stop marked failed", "run", r.ID, "step", r.CurrentStep, "reason", why)
	}
	return got, nil
}

// CodeElicitationLost starts the error of a run whose step waited on an
// upstream request (elicitation, sampling) when mcpflow stopped, and that
// could not be repeated nor routed: workflow.OutcomeElicitationLost.
const CodeElicitationLost = workflow.OutcomeElicitationLost

// resumable says whether run r can resume, with what; or why not. When
// the run waited on its server's request lost (its interrupt), the call
// that asked is made again if safe to repeat; otherwise it is named in
// asked, by call id, with why, to fail as elicitation_lost.
func (m *Manager) resumable(ctx context.Context, r store.Run, lost *workflow.Interrupt) (*Setup, map[string]string, string) {
	if r.Checkpoint == nil {
		return nil, nil, "no checkpoint"
	}
	setup, err := m.runSetup(ctx, r)
	if err != nil {
		return nil, nil, fmt.Sprintf("setup: %v", err)
	}
	var asked map[string]string
	for id, c := range r.Checkpoint.Calls {
		switch {
		case c.Task != nil || c.AwaitsInput() || safeToRepeat(setup, c):
			// A call whose upstream task the checkpoint names is not
			// made again: the run polls that task (actors/run/tasks.go).
			// Nor is one that waits on answers to its input requests.
		case lost != nil && c.FrameID == lost.FrameID && c.NodeID == lost.NodeID:
			if asked == nil {
				asked = map[string]string{}
			}
			asked[id] = fmt.Sprintf("mcpflow stopped while step %q waited on an upstream %s request, which died with its session; %s is not safe to repeat", c.NodeID, lost.Kind, c.Capability)
		default:
			return nil, nil, fmt.Sprintf("step %q was calling %s, which is not safe to repeat", c.NodeID, c.Capability)
		}
	}
	return setup, asked, ""
}

// safeToRepeat reports whether call c may be made again.
func safeToRepeat(setup *Setup, c workflow.Call) bool {
	if t, ok := setup.targets[c.Capability]; ok && t.Builtin != nil {
		return true
	}
	capability, ok := setup.options.Capability(c.Capability)
	return ok && capability.SafeToRepeat
}

// launch continues a recovered run in the background; lost are the
// calls that fail as elicitation_lost (run.Spec.Lost).
func (m *Manager) launch(rec store.Run, setup *Setup, lost map[string]string) error {
	m.recordRunRecovered(rec)
	return m.spawnRun(rec, setup, nil, nil, lost, reply.Address{}, reply.Address{})
}

// recordRunRecovered records workflow_run_resumed for a run that goes on
// after a stop. A run's other admin events (it started, it resumed after
// an interrupt, it ended) the store appends in the transactions of its
// commits (store.RunAdminEvents), at no commit of their own.
func (m *Manager) recordRunRecovered(r store.Run) {
	e := store.RunAdminEvent(store.EventRunResumed, r)
	e.TimestampEpochMs = m.now().UnixMilli()
	audit.Append(context.Background(), m.cfg.Store, e)
}
