package app

import (
	"fmt"

	"github.com/mcpflow/mcpflow/actors/config"
)

// stepCeiling is the most steps any run takes: cfg's
// server.limits.max_steps, or its default.
func stepCeiling(cfg *config.File) int {
	if cfg == nil {
		return config.DefaultMaxSteps
	}
	return cfg.Server.Limits.StepCeiling()
}

// checkStepBudget refuses a default step budget (serve's --max-steps)
// above the ceiling: no run could use the steps it grants.
func checkStepBudget(opts Options) error {
	if ceiling := stepCeiling(opts.Config); opts.MaxSteps > ceiling {
		return fmt.Errorf("the step budget of runs (--max-steps %d) is above this server's ceiling of %d steps (server.limits.max_steps): lower --max-steps, or raise server.limits.max_steps in the config",
			opts.MaxSteps, ceiling)
	}
	return nil
}
