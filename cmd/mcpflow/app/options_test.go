package app_test

import (
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/service"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
)

// TestMaxConcurrentRunsComesFromTheEdgeBlock: server.edge's
// max_concurrent_runs is the bound of run starts, which the service puts
// in its table; without it the default applies.
func TestMaxConcurrentRunsComesFromTheEdgeBlock(t *testing.T) {
	is := is.New(t)
	is.Equal(app.DefaultOptions(nil).MaxConcurrentRuns, service.DefaultMaxConcurrentRuns)
	is.Equal(app.DefaultOptions(&config.File{}).MaxConcurrentRuns, service.DefaultMaxConcurrentRuns)
	cfg := &config.File{Server: config.Server{Edge: &config.Edge{MaxConcurrentRuns: 6}}}
	is.Equal(app.DefaultOptions(cfg).MaxConcurrentRuns, 6)
}

// TestAStepBudgetAboveTheCeilingIsRefusedAtStart: a default step budget
// (--max-steps) above server.limits.max_steps is refused before anything
// starts, naming both and the fix.
func TestAStepBudgetAboveTheCeilingIsRefusedAtStart(t *testing.T) {
	is := is.New(t)
	cfg := &config.File{Version: 1, Server: config.Server{Store: config.Store{Root: filepath.Join(t.TempDir(), "store")},
		Limits: &config.Limits{MaxSteps: 500}}}
	opts := app.DefaultOptions(cfg)
	opts.MaxSteps = 501
	_, err := app.Start(t.Context(), opts)
	is.True(err != nil) // refused
	is.Equal(err.Error(), "the step budget of runs (--max-steps 501) is above this server's ceiling of 500 steps (server.limits.max_steps): lower --max-steps, or raise server.limits.max_steps in the config")
}
