package runs

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpflow/mcpflow/actors/records"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/schema"
)

// WrapperRequest is a direct call of a saved wrapper
// (workflow.capabilities.call of "workflow.<artifact_id>.v<version>").
type WrapperRequest struct {
	Artifact store.Artifact
	// DeploymentID names the deployment to run under; nil runs with no
	// binding, each capability resolving as the connection it names.
	DeploymentID *string
	Input        workflow.Object
	// Wait is as StartRequest's.
	Wait time.Duration
}

// WrapperCall is what a direct call of a wrapper came to when it was not
// refused: either it did not run (Unrunnable, or Failed), or Run is its
// run record.
type WrapperCall struct {
	// Diagnostics are the deployment's dependency diagnostics.
	Diagnostics []Diagnostic
	// Unrunnable: a dependency of the deployment failed; nothing ran.
	Unrunnable bool
	// Failed is the call's failure before it ran (the payload does not
	// match the input schema), which the caller reports as a result.
	Failed error
	Run    store.Run
}

// NoDeploymentError refuses a wrapper called with no deployment whose
// setup failed: Err is the setup's failure, which the caller maps and
// names in its message.
type NoDeploymentError struct {
	Name string // the wrapper's capability name
	Err  error
}

func (e *NoDeploymentError) Error() string {
	return fmt.Sprintf("%s cannot run without a deployment: %v", e.Name, e.Err)
}

func (e *NoDeploymentError) Unwrap() error { return e.Err }

// CallWrapper runs a saved wrapper as a workflow: under the deployment
// req.DeploymentID names (which must pin this very version, and whose
// dependencies must resolve), or else with no binding. A wrapper that can
// pause for input is refused: a direct call cannot be resumed. Errors are
// refusals (an Error, a StoreError, a NoDeploymentError, ErrShuttingDown).
func (m *Manager) CallWrapper(ctx context.Context, req WrapperRequest) (WrapperCall, error) {
	a := req.Artifact
	name := records.CapabilityName(a.ID, a.Version)
	d := store.Deployment{ArtifactID: a.ID, ArtifactVersion: a.Version, Bindings: []store.Binding{}, DriftPolicy: "block"}
	var call WrapperCall
	if req.DeploymentID != nil {
		var err error
		if d, err = m.cfg.Store.GetDeployment(ctx, *req.DeploymentID); err != nil {
			return call, storeErr(err, fmt.Sprintf("deployment %q", *req.DeploymentID))
		}
		if d.ArtifactID != a.ID || d.ArtifactVersion != a.Version {
			return call, invalid("deployment %q does not target %s (it pins %s)", d.ID, name, records.CapabilityName(d.ArtifactID, d.ArtifactVersion))
		}
		call.Diagnostics = m.Dependencies(d, a)
		if _, failed := FirstError(call.Diagnostics); failed {
			call.Unrunnable = true
			return call, nil
		}
	}
	setup, err := m.Setup(ctx, d, a)
	if err != nil {
		if req.DeploymentID == nil {
			return call, &NoDeploymentError{Name: name, Err: err}
		}
		return call, err
	}
	if step, ok := setup.InterruptStep(); ok {
		return call, invalid("%s can pause for input (interrupt step %q), which a direct call cannot resume; run it through a deployment", name, step)
	}
	input := orEmpty(req.Input)
	if err := schema.Default.Validate(a.InputSchema, input); err != nil {
		call.Failed = fmt.Errorf("the payload does not match the input schema: %w", err)
		return call, nil
	}
	call.Run, err = m.Run(ctx, RunRequest{Deployment: d, Artifact: a, Setup: setup, Input: input, Diagnostics: call.Diagnostics, Wait: req.Wait})
	return call, err
}
