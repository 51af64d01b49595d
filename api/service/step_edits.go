package service

import (
	"context"
	"fmt"
	"maps"
	"slices"

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

// remedyTools are the methods that make authoring's remedies.
var remedyTools = map[authoring.Remedy]string{
	authoring.RemedyPatch:          protocol.MethodWorkspacePatch,
	authoring.RemedySave:           protocol.MethodWorkspaceCreateArtifact,
	authoring.RemedyAddStep:        protocol.MethodWorkspaceAddStepFromCapability,
	authoring.RemedySetStart:       protocol.MethodWorkspaceSetStart,
	authoring.RemedyBranch:         protocol.MethodWorkspaceBranch,
	authoring.RemedyBind:           protocol.MethodWorkspaceBind,
	authoring.RemedyFindCapability: protocol.MethodCapabilitiesList,
}

// afterEdit advises the next call after an edit: after a conflict, to
// read the workspace (or choose another id); else the remedy
// authoring.Advise names for the document and its first error, as this
// API's method.
func afterEdit(r protocol.WorkspaceResult, doc workflow.Object) protocol.NextActions {
	if r.Status == statusConflict {
		if len(r.Diagnostics) > 0 && r.Diagnostics[0].Code == "workspace_exists" {
			return nextActions(false, nil, nil, "The workspace already exists; choose another workspace_id or edit it.", nil)
		}
		return nextActions(true, nil, ptr(protocol.MethodWorkspaceGet),
			fmt.Sprintf("Nothing changed: the workspace is at revision %d. Read it, then repeat the edit at that revision.", r.Revision),
			[]protocol.PatchExample{{Description: "Read the current draft.", Tool: protocol.MethodWorkspaceGet,
				Request: protocol.Object{"workspace_id": r.WorkspaceID, "include_draft": true}}})
	}
	var first authoring.Finding
	if i := slices.IndexFunc(r.Diagnostics, protocol.Diagnostic.IsError); i >= 0 {
		d := r.Diagnostics[i]
		first = authoring.Finding{Code: d.Code, Message: d.Message, StepID: deref(d.StepID)}
	}
	valid := r.Status == statusValid
	advice := authoring.Advise(doc, valid, first)
	tool := remedyTools[advice.Remedy]
	var examples []protocol.PatchExample
	if e := advice.Example; e != nil {
		request := protocol.Object{"workspace_id": r.WorkspaceID}
		if advice.Remedy != authoring.RemedySave { // an edit names the revision it applies to; create_artifact takes none
			request["revision"] = r.Revision
		}
		maps.Copy(request, e.Params)
		examples = []protocol.PatchExample{{Description: e.Description, Tool: tool, Request: request}}
	}
	return nextActions(true, &valid, &tool, advice.Reason, examples)
}
