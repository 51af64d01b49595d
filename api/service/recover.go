package service

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// Recovered counts what RecoverRuns did with the runs a stop cut off.
type Recovered struct {
	Resumed, Failed int
}

// RecoverRuns is called once at start, before serving: every run still
// "running" was cut off by a stop. A run whose calls in flight are all safe
// to repeat (none, built-ins, or tools annotated readOnlyHint or
// idempotentHint) resumes from its last committed step in the background;
// any other ends failed, its error saying that the outcome of the step in
// flight is unknown. Interrupted runs are not running and stay as they are.
func (s *Service) RecoverRuns(ctx context.Context) (Recovered, error) {
	running, _, err := s.Store.ListRuns(ctx, store.RunQuery{Status: store.RunRunning})
	if err != nil {
		return Recovered{}, fmt.Errorf("list running runs: %w", err)
	}
	return s.RecoverClaimed(ctx, running)
}

// RecoverClaimed recovers runs that a stop cut off, as RecoverRuns does:
// in a cluster, the runs a node claimed (store.RunClaimer), its own as it
// starts or a dead node's.
func (s *Service) RecoverClaimed(ctx context.Context, running []store.Run) (Recovered, error) {
	var got Recovered
	for _, r := range running {
		setup, why := s.resumable(ctx, r)
		if why == "" {
			if err := s.launch(r, setup); err != nil {
				return got, fmt.Errorf("resume run %s: %w", r.ID, err)
			}
			got.Resumed++
			slog.Info("run resumed after a stop", "run", r.ID, "step", r.CurrentStep)
			continue
		}
		failed := store.RecoveredRun(r, s.now())
		if err := s.Store.RecordProgress(ctx, failed, nil); err != nil {
			return got, fmt.Errorf("recover run %s: %w", r.ID, err)
		}
		got.Failed++
		slog.Warn("run cut off by a stop marked failed", "run", r.ID, "step", r.CurrentStep, "reason", why)
	}
	return got, nil
}

// resumable says whether run r can resume, with what; or why not.
func (s *Service) resumable(ctx context.Context, r store.Run) (runSetup, string) {
	if r.Checkpoint == nil {
		return runSetup{}, "no checkpoint"
	}
	a, err := s.artifact(ctx, r.ArtifactID, r.ArtifactVersion)
	if err != nil {
		return runSetup{}, fmt.Sprintf("artifact: %v", err)
	}
	setup, err := s.setup(ctx, r.Deployment, a)
	if err != nil {
		return runSetup{}, fmt.Sprintf("setup: %v", err)
	}
	for _, c := range r.Checkpoint.Calls {
		if !s.safeToRepeat(setup, c) {
			return runSetup{}, fmt.Sprintf("step %q was calling %s, which is not safe to repeat", c.NodeID, c.Capability)
		}
	}
	return setup, ""
}

// safeToRepeat reports whether call c may be made again.
func (s *Service) safeToRepeat(setup runSetup, c workflow.Call) bool {
	if t, ok := setup.targets[c.Capability]; ok && t.Builtin != nil {
		return true
	}
	capability, ok := setup.options.Capability(c.Capability)
	return ok && capability.SafeToRepeat
}
