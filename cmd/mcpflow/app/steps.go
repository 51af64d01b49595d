package app

import (
	"fmt"
	"time"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/run"
)

// stepCeiling is the most steps any run takes:
// server.limits.max_steps.
func (o Options) stepCeiling() int {
	if o.Config == nil {
		return config.DefaultMaxSteps
	}
	return o.Config.Server.Limits.StepCeiling()
}

// liveLimits bound what runs store of their calls' progress and logs:
// server.limits.step_progress_interval_ms and max_step_logs.
func (o Options) liveLimits() run.LiveLimits {
	if o.Config == nil || o.Config.Server.Limits == nil {
		return run.LiveLimits{}
	}
	l := o.Config.Server.Limits
	return run.LiveLimits{ProgressInterval: time.Duration(l.StepProgressIntervalMs) * time.Millisecond, StepLogs: l.MaxStepLogs}
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
