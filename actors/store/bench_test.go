package store_test

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// BenchmarkRunLifecycle measures what the run actor asks of a store for a
// two-step run: CreateRun, RecordProgress twice with one trace entry each,
// and GetRun.
func BenchmarkRunLifecycle(b *testing.B) {
	b.Run("memory", func(b *testing.B) {
		benchmarkRunLifecycle(b, store.NewMemory())
	})
	b.Run("sqlite", func(b *testing.B) {
		s, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		benchmarkRunLifecycle(b, s)
	})
}

func benchmarkRunLifecycle(b *testing.B, s store.Store) {
	b.Cleanup(func() {
		if err := s.Close(); err != nil {
			b.Error(err)
		}
	})
	ctx := b.Context()
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	steps := []workflow.TraceEntry{
		{FrameID: "root", NodeID: "fetch", StepType: workflow.NodeCall, Outcome: workflow.OutcomeOK, NextNodeID: "parse",
			ResolvedInput: workflow.Object{"url": "https://example.com"}, Output: workflow.Object{"status": 200.0}},
		{FrameID: "root", NodeID: "parse", StepType: workflow.NodeCall, Outcome: workflow.OutcomeOK, NextNodeID: workflow.End,
			ResolvedInput: workflow.Object{"body": "<html></html>"}, Output: workflow.Object{"title": "Example"}},
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r := store.Run{
			ID: "run-" + strconv.Itoa(i), DeploymentID: "dep", ArtifactID: "wf", ArtifactVersion: 1,
			Status: store.RunRunning, CurrentStep: "fetch", Input: workflow.Object{"url": "https://example.com"},
			CreatedAt: start, UpdatedAt: start,
		}
		if err := s.CreateRun(ctx, r); err != nil {
			b.Fatal(err)
		}
		for _, step := range steps {
			r.TraceCount++
			r.CurrentStep = step.NextNodeID
			r.UpdatedAt = r.UpdatedAt.Add(time.Second)
			if err := s.RecordProgress(ctx, r, []workflow.TraceEntry{step}); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := s.GetRun(ctx, r.ID); err != nil {
			b.Fatal(err)
		}
	}
}
