package app

import (
	"fmt"

	"github.com/mcpflow/mcpflow/actors/config"
)

// stepCeiling is the most steps any run takes:
// server.limits.max_steps.
func (o Options) stepCeiling() int {
	if o.Config == nil {
		return config.DefaultMaxSteps
	}
	return o.Config.Server.Limits.StepCeiling()
}

// checkStepBudget refuses a default step budget (serve's --max-steps)
// above the ceiling: no run could use the steps it grants.
func (o Options) checkStepBudget() error {
	if ceiling := o.stepCeiling(); o.MaxSteps > ceiling {
		return fmt.Errorf("the step budget of runs (--max-steps %d) is above this server's ceiling of %d steps (server.limits.max_steps): lower --max-steps, or raise server.limits.max_steps in the config",
			o.MaxSteps, ceiling)
	}
	return nil
}
