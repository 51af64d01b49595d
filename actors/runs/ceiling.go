package runs

import (
	"cmp"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// StepCeiling is the most steps any run takes on this node: Config's
// StepCeiling (server.limits.max_steps), or config.DefaultMaxSteps.
func (m *Manager) StepCeiling() int { return cmp.Or(m.cfg.StepCeiling, config.DefaultMaxSteps) }

// stepBudget is the step budget of a run of deployment d: its
// limits.max_steps, else the node's MaxSteps, else
// workflow.DefaultMaxSteps; never above the ceiling. A deployment saved
// with more before the ceiling was is held to it (stepsClamped says so).
func (m *Manager) stepBudget(d store.Deployment) int {
	budget := cmp.Or(m.cfg.MaxSteps, workflow.DefaultMaxSteps)
	if l := d.Limits; l != nil && l.MaxSteps != nil {
		budget = *l.MaxSteps
	}
	return min(budget, m.StepCeiling())
}

// stepsClamped warns of a deployment whose limits.max_steps is above the
// ceiling, which its runs are held to; nil when it is not.
func (m *Manager) stepsClamped(d store.Deployment) *Diagnostic {
	ceiling := m.StepCeiling()
	if d.Limits == nil || d.Limits.MaxSteps == nil || *d.Limits.MaxSteps <= ceiling {
		return nil
	}
	return &Diagnostic{Severity: "warning", Code: "max_steps_clamped", LogicalRef: "limits.max_steps",
		Message: fmt.Sprintf("limits.max_steps is %d, above this server's ceiling of %d steps (server.limits.max_steps): its runs stop at %d steps",
			*d.Limits.MaxSteps, ceiling, ceiling),
		RepairHint: ptr(fmt.Sprintf("save the deployment again with limits.max_steps at most %d, or raise server.limits.max_steps in the server's config", ceiling))}
}
