package service

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/authoring"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// The step edits of draft workspaces: each decodes its params into those
// of its authoring operation and runs it as a step edit.

func (s *Service) addStep(ctx context.Context, p protocol.AddStepParams) (protocol.DraftEditResult, error) {
	op := authoring.AddStepParams{StepID: p.StepID, Step: p.Step, Routes: p.Routes}
	if p.Incoming != nil {
		op.Incoming = &authoring.RouteSource{StepID: p.Incoming.StepID, Outcome: p.Incoming.Outcome}
	}
	return stepEdit(s, ctx, p.WorkspaceID, p.Revision, authoring.AddStep, op)
}

func (s *Service) addStepFromCapability(ctx context.Context, p protocol.AddStepFromCapabilityParams) (protocol.DraftEditResult, error) {
	inputs, err := languageInput(p.InputBindings)
	if err != nil {
		return protocol.DraftEditResult{}, err
	}
	return stepEdit(s, ctx, p.WorkspaceID, p.Revision, authoring.AddStepFromCapability, authoring.AddStepFromCapabilityParams{
		StepID: p.StepID, CapabilityName: p.CapabilityName, RouteFromStep: p.RouteFromStep, RouteFromOutcome: p.RouteFromOutcome,
		Routes: p.Routes, InputMap: p.InputMap, InputBindings: inputs, BindOutputs: p.BindOutputs,
		Desc: p.Desc, Retry: p.Retry, TimeoutSeconds: p.TimeoutSeconds,
	})
}

func (s *Service) bind(ctx context.Context, p protocol.BindParams) (protocol.DraftEditResult, error) {
	return stepEdit(s, ctx, p.WorkspaceID, p.Revision, authoring.Bind,
		authoring.BindParams{StepID: p.StepID, SourcePath: p.SourcePath, TargetPath: p.TargetPath})
}

func (s *Service) branch(ctx context.Context, p protocol.BranchParams) (protocol.DraftEditResult, error) {
	return stepEdit(s, ctx, p.WorkspaceID, p.Revision, authoring.Branch, authoring.BranchParams{StepID: p.StepID, Routes: p.Routes})
}

func (s *Service) handleRoutes(ctx context.Context, p protocol.HandleParams) (protocol.DraftEditResult, error) {
	op := authoring.HandleParams{Target: p.Target}
	if p.Branches != nil {
		op.Branches = make([]authoring.RouteSource, len(p.Branches))
		for i, b := range p.Branches {
			op.Branches[i] = authoring.RouteSource{StepID: b.StepID, Outcome: b.Outcome}
		}
	}
	return stepEdit(s, ctx, p.WorkspaceID, p.Revision, authoring.Handle, op)
}

func (s *Service) updateCapabilityStep(ctx context.Context, p protocol.UpdateCapabilityStepParams) (protocol.DraftEditResult, error) {
	u := p.Update
	input := authoring.Field[[]workflow.InputBinding]{Set: u.Input.Set}
	if u.Input.Value != nil {
		bindings, err := languageBindings[workflow.InputBinding](*u.Input.Value, "update.input: ")
		if err != nil {
			return protocol.DraftEditResult{}, err
		}
		input.Value = &bindings
	}
	return stepEdit(s, ctx, p.WorkspaceID, p.Revision, authoring.UpdateCapabilityStep, authoring.UpdateCapabilityStepParams{
		StepID: p.StepID, Desc: field(u.Desc), Retry: field(u.Retry), TimeoutSeconds: field(u.TimeoutSeconds), Input: input,
	})
}

// field is a patch field as the authoring operations take it.
func field[T any](f protocol.Field[T]) authoring.Field[T] {
	return authoring.Field[T]{Set: f.Set, Value: f.Value}
}

// afterEdit advises the next call after an edit, naming this API's
// methods.
func afterEdit(r protocol.WorkspaceResult, doc workflow.Object) protocol.NextActions {
	request := func(kv ...any) protocol.Object {
		o := protocol.Object{"workspace_id": r.WorkspaceID, "revision": r.Revision}
		for i := 0; i+1 < len(kv); i += 2 {
			o[kv[i].(string)] = kv[i+1]
		}
		return o
	}
	switch r.Status {
	case statusConflict:
		if len(r.Diagnostics) > 0 && r.Diagnostics[0].Code == "workspace_exists" {
			return nextActions(false, nil, nil, "The workspace already exists; choose another workspace_id or edit it.", nil)
		}
		return nextActions(true, nil, ptr(protocol.MethodWorkspaceGet),
			fmt.Sprintf("Nothing changed: the workspace is at revision %d. Read it, then repeat the edit at that revision.", r.Revision),
			[]protocol.PatchExample{{Description: "Read the current draft.", Tool: protocol.MethodWorkspaceGet,
				Request: protocol.Object{"workspace_id": r.WorkspaceID, "include_draft": true}}})
	case statusValid:
		name, _ := doc["name"].(string)
		outcomes, ok := doc["outcomes"].([]any)
		if !ok || len(outcomes) == 0 {
			outcomes = []any{workflow.OutcomeOK}
		}
		return nextActions(true, ptr(true), ptr(protocol.MethodWorkspaceCreateArtifact),
			"The draft is valid: save it as an artifact, or keep editing.",
			[]protocol.PatchExample{{Description: "Save the draft as version 1 of an artifact.", Tool: protocol.MethodWorkspaceCreateArtifact,
				Request: protocol.Object{"workspace_id": r.WorkspaceID, "artifact_id": name, "version": 1, "title": name, "outcomes": outcomes}}})
	}
	steps, _ := doc["steps"].(map[string]any)
	if len(steps) == 0 {
		return nextActions(true, ptr(false), ptr(protocol.MethodWorkspaceAddStepFromCapability),
			"The draft has no steps yet: add one; the first step added becomes the start.", nil)
	}
	var d protocol.Diagnostic
	if i := slices.IndexFunc(r.Diagnostics, protocol.Diagnostic.IsError); i >= 0 {
		d = r.Diagnostics[i]
	}
	stepID := ""
	if d.StepID != nil {
		stepID = *d.StepID
	}
	advise := func(tool, advice string, examples ...protocol.PatchExample) protocol.NextActions {
		return nextActions(true, ptr(false), ptr(tool), strings.TrimSpace(d.Message+". "+advice), examples)
	}
	switch d.Code {
	case "unknown_start":
		return advise(protocol.MethodWorkspaceSetStart, "Set the start to the step the workflow begins with.",
			protocol.PatchExample{Description: "Start at the first step.", Tool: protocol.MethodWorkspaceSetStart,
				Request: request("step_id", slices.Sorted(maps.Keys(steps))[0])})
	case "missing_outcome_edge":
		var examples []protocol.PatchExample
		if outcome, ok := quotedAfter(d.Message, "outcome "); ok && stepID != "" {
			examples = append(examples, protocol.PatchExample{Description: "Finish the workflow on that outcome.", Tool: protocol.MethodWorkspaceBranch,
				Request: request("step_id", stepID, "routes", protocol.Object{outcome: workflow.End})})
		}
		return advise(protocol.MethodWorkspaceBranch, "Route the outcome with branch (or handle, for several at once).", examples...)
	case "unknown_edge_destination":
		return advise(protocol.MethodWorkspaceAddStepFromCapability, "Add the step the route names, or re-route it with branch.")
	case "invalid_source_path", "invalid_destination_path", "invalid_node_input_field", "invalid_node_output_field", "invalid_workflow_output_field":
		return advise(protocol.MethodWorkspaceBind, "bind declares the field it wires by projecting the capability's schema.")
	case "unknown_node_def":
		return advise(protocol.MethodCapabilitiesList, "Find an available capability and use it instead.")
	}
	return advise(protocol.MethodWorkspacePatch, "Fix the draft where the diagnostic points.")
}

// quotedAfter reads the Go-quoted string that follows prefix in s.
func quotedAfter(s, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return "", false
	}
	q, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return "", false
	}
	v, err := strconv.Unquote(q)
	return v, err == nil
}
