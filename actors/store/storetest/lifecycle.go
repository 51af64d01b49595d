package storetest

import (
	"context"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// lifecycleStart is when every run of RunLifecycle starts.
var lifecycleStart = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// lifecycleSteps are the trace entries of a RunLifecycle run's two steps.
var lifecycleSteps = []workflow.TraceEntry{
	{FrameID: "root", NodeID: "fetch", StepType: workflow.NodeCall, Outcome: workflow.OutcomeOK, NextNodeID: "parse",
		ResolvedInput: workflow.Object{"url": "https://example.com"}, Output: workflow.Object{"status": 200.0}},
	{FrameID: "root", NodeID: "parse", StepType: workflow.NodeCall, Outcome: workflow.OutcomeOK, NextNodeID: workflow.End,
		ResolvedInput: workflow.Object{"body": "<html></html>"}, Output: workflow.Object{"title": "Example"}},
}

// RunLifecycle makes run id as the store benchmarks measure it: CreateRun,
// one RecordProgress per step (two), then GetRun.
func RunLifecycle(ctx context.Context, s store.Store, id string) error {
	r := store.Run{
		ID: id, DeploymentID: "dep", ArtifactID: "wf", ArtifactVersion: 1,
		Status: store.RunRunning, CurrentStep: "fetch", Input: workflow.Object{"url": "https://example.com"},
		CreatedAt: lifecycleStart, UpdatedAt: lifecycleStart,
	}
	if err := s.CreateRun(ctx, r, nil); err != nil {
		return err
	}
	for _, step := range lifecycleSteps {
		r.TraceCount++
		r.CurrentStep = step.NextNodeID
		r.UpdatedAt = r.UpdatedAt.Add(time.Second)
		if err := s.RecordProgress(ctx, r, []workflow.TraceEntry{step}); err != nil {
			return err
		}
	}
	_, err := s.GetRun(ctx, r.ID)
	return err
}
