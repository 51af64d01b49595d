package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/records"
	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// Outcomes of a direct call that did not end with a capability's or a
// workflow's own outcome.
const (
	outcomeRuntimeError = runs.OutcomeRuntimeError // the call failed
	outcomeUnrunnable   = "unrunnable"             // the wrapper's deployment cannot run
)

// wrapperSource is the source id of saved wrapper capabilities.
const wrapperSource = records.WrapperSource

// callCapability answers workflow.capabilities.call. A saved wrapper
// ("workflow.<artifact_id>.v<version>", kind wrapper) runs as a workflow
// through a run actor, exactly as a run of a deployment does, so it has a
// run record; its outcome is the workflow's outcome (the reference
// answered the run status, Appendix C.3). Any other name is a node spec
// called directly, with no run record: an MCP tool through the
// connection's session actor (the session runs share), a built-in in
// place. A call that fails is still a result: outcome "runtime_error",
// a null output and a capability_call_failed diagnostic.
func (s *Service) callCapability(ctx context.Context, p protocol.CallCapabilityParams) (protocol.CapabilityCallResult, error) {
	a, wrapper, err := records.Wrapper(ctx, s.Store, p.QualifiedName)
	if err != nil {
		return protocol.CapabilityCallResult{}, recordsErr(err)
	}
	if wrapper {
		return s.callWrapper(ctx, a, p)
	}
	c, err := s.capability(ctx, p.QualifiedName)
	if err != nil {
		return protocol.CapabilityCallResult{}, err
	}
	// As in the reference, a node spec is called outside any deployment:
	// deployment_id is not used, and the answer's is null.
	res := protocol.CapabilityCallResult{QualifiedName: c.Name, SourceID: c.SourceID, Kind: protocol.CapabilityKindNodeSpec, Diagnostics: []protocol.DependencyDiag{}}
	outcome, output, err := s.Runs.CallNodeSpec(ctx, c, orEmpty(p.Payload))
	if err != nil {
		return callFailed(res, c.Name, &c.SourceID, err), nil
	}
	res.Outcome, res.Output = outcome, output
	return res, nil
}

// callWrapper runs a saved wrapper as a workflow through the run manager
// (Manager.CallWrapper: the deployment, its dependencies, the setup) and
// answers what it came to: unrunnable, failed, or the run's outcome.
func (s *Service) callWrapper(ctx context.Context, a store.Artifact, p protocol.CallCapabilityParams) (protocol.CapabilityCallResult, error) {
	name := records.CapabilityName(a.ID, a.Version)
	res := protocol.CapabilityCallResult{QualifiedName: name, SourceID: wrapperSource, Kind: protocol.CapabilityKindWrapper, DeploymentID: p.DeploymentID, Diagnostics: []protocol.DependencyDiag{}}
	call, err := s.Runs.CallWrapper(ctx, runs.WrapperRequest{Artifact: a, DeploymentID: p.DeploymentID, Input: orEmpty(p.Payload), Wait: s.RunWait})
	var bare *runs.NoDeploymentError
	switch {
	case errors.As(err, &bare):
		return res, invalid("%s cannot run without a deployment: %v; pass the deployment_id of a deployment of it", name, runsErr(bare.Err))
	case err != nil:
		return res, runsErr(err)
	case call.Unrunnable:
		res.Outcome, res.Diagnostics = outcomeUnrunnable, dependencyDiags(call.Diagnostics)
		return res, nil
	case call.Failed != nil:
		return callFailed(res, name, p.DeploymentID, call.Failed), nil
	}
	rec := call.Run
	run, err := s.runResult(ctx, rec, nil)
	if err != nil {
		return res, err
	}
	res.Diagnostics = append(res.Diagnostics, run.Diagnostics...)
	switch run.Status {
	case store.RunCompleted:
		res.Outcome, res.Output = firstNonEmpty(deref(run.Outcome), workflow.OutcomeOK), run.Output
		if res.Output == nil {
			res.Output = protocol.Object{}
		}
	case store.RunFailed, store.RunCancelled:
		res = callFailed(res, name, p.DeploymentID, fmt.Errorf("workflow run %s %s: %s", rec.ID, run.Status, deref(run.Error)))
	default: // still running after the run wait, or paused
		res.Outcome = run.Status
		res.Diagnostics = append(res.Diagnostics, protocol.DependencyDiag{
			Severity: "warning", Code: "capability_call_unfinished", LogicalRef: name, BoundSource: p.DeploymentID,
			Message:    fmt.Sprintf("workflow run %s is %s; it has no outcome yet", rec.ID, run.Status),
			RepairHint: ptr(fmt.Sprintf("call %s with run_id %q to see how it ends", protocol.MethodRunsInspect, rec.ID)),
		})
	}
	return res, nil
}

// callFailed turns res into the reference's answer to a failed call.
func callFailed(res protocol.CapabilityCallResult, ref string, bound *string, err error) protocol.CapabilityCallResult {
	res.Outcome, res.Output = outcomeRuntimeError, nil
	res.Diagnostics = append(res.Diagnostics, protocol.DependencyDiag{
		Severity: "error", Code: "capability_call_failed", LogicalRef: ref, BoundSource: bound,
		Message:    audit.RedactURLQueries(fmt.Sprintf("capability %q failed: %v", ref, err)),
		RepairHint: ptr("check the payload and the source (workflow.sources.diagnose), then call again; inside a workflow, read the run's trace"),
	})
	return res
}
