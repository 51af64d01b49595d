package runs_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// saveSpin saves the artifact "spin", whose only step is a when routing
// to itself, and its deployment id with limits (nil: none), straight in
// the store, as one saved before the step ceiling was.
func (n *node) saveSpin(t *testing.T, id string, limits *store.RunLimits) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	ctx := bounded(t)
	draft, diags := workflow.ParseDraft(workflow.Object{"name": "spin", "start": "spin", "outcomes": []any{"ok"}, "steps": workflow.Object{
		"spin": workflow.Object{"when": workflow.Object{
			"if":   workflow.Object{"op": "eq", "left": workflow.Object{"value": 1}, "right": workflow.Object{"value": 1}},
			"then": "spin"}}}})
	is.Equal(diags, nil) // the spin draft parses
	plan, err := workflow.Compile(draft)
	is.NoErr(err) // and compiles
	_, err = n.store.SaveArtifact(ctx, store.Artifact{ID: "spin", Version: 1, Title: "Spin", Kind: "workflow", Plan: plan, Outcomes: plan.Outcomes})
	is.NoErr(err) // the artifact is saved
	is.NoErr(n.store.SaveDeployment(ctx, store.Deployment{ID: id, ArtifactID: "spin", ArtifactVersion: 1, DriftPolicy: "block", Limits: limits}))
}

// A deployment saved with a limits.max_steps above the ceiling, before
// the ceiling was, runs to the ceiling and no further, and its dependency
// check warns of it, naming the ceiling and the config key; one within
// the ceiling, or with no limit of its own, is not warned of.
func TestARunIsHeldToTheStepCeilingWhateverItsDeploymentAsks(t *testing.T) {
	is := is.New(t)
	n := newNodeTuned(t, func(c *runs.Config) { c.StepCeiling = 50 })
	is.Equal(n.manager.StepCeiling(), 50)
	billion, ten := 1_000_000_000, 10
	n.saveSpin(t, "greedy", &store.RunLimits{MaxSteps: &billion})
	n.saveSpin(t, "modest", &store.RunLimits{MaxSteps: &ten})
	n.saveSpin(t, "unset", nil)
	for _, tc := range []struct {
		deployment string
		steps      int
		warned     bool
	}{
		{"greedy", 50, true},
		{"modest", 10, false},
		{"unset", 50, false}, // workflow.DefaultMaxSteps, held to the ceiling
	} {
		t.Run(tc.deployment, func(t *testing.T) {
			is := is.New(t)
			ctx := bounded(t)
			res, err := n.manager.Start(ctx, runs.StartRequest{DeploymentID: tc.deployment, Wait: patience})
			is.NoErr(err)
			is.Equal(res.Run.Status, store.RunFailed)
			is.Equal(res.Run.TraceCount, tc.steps) // the steps it was allowed

			d, a, err := n.manager.Deployment(ctx, tc.deployment)
			is.NoErr(err)
			var warnings []runs.Diagnostic
			for _, dg := range n.manager.Dependencies(d, a) {
				if dg.Code == "max_steps_clamped" {
					warnings = append(warnings, dg)
				}
			}
			is.Equal(len(warnings) == 1, tc.warned)
			if tc.warned {
				is.Equal(warnings[0].Severity, "warning") // the deployment still runs
				is.Equal(warnings[0].Message, "limits.max_steps is 1000000000, above this server's ceiling of 50 steps (server.limits.max_steps): its runs stop at 50 steps")
				is.Equal(*warnings[0].RepairHint, "save the deployment again with limits.max_steps at most 50, or raise server.limits.max_steps in the server's config")
			}
		})
	}
}
