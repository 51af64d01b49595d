package service

import (
	"context"

	"github.com/mcpflow/mcpflow/actors/workflow/authoring"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// The binding edits of draft workspaces: the *_bindings setters replace a
// complete, ordered canonical binding list, the *_map setters take the
// reference's legacy maps (package authoring says how each is checked).

func (s *Service) setStepInputBindings(ctx context.Context, p protocol.SetStepInputBindingsParams) (protocol.DraftEditResult, error) {
	bindings, err := languageInput(p.Bindings)
	if err != nil {
		return protocol.DraftEditResult{}, err
	}
	return stepEdit(s, ctx, p.WorkspaceID, p.Revision, authoring.SetStepInputBindings,
		authoring.SetStepInputBindingsParams{StepID: p.StepID, Bindings: bindings})
}

func (s *Service) setStepOutputBindings(ctx context.Context, p protocol.SetStepOutputBindingsParams) (protocol.DraftEditResult, error) {
	bindings, err := languageOutput(p.Bindings)
	if err != nil {
		return protocol.DraftEditResult{}, err
	}
	return stepEdit(s, ctx, p.WorkspaceID, p.Revision, authoring.SetStepOutputBindings,
		authoring.SetStepOutputBindingsParams{StepID: p.StepID, Bindings: bindings})
}

func (s *Service) setWorkflowOutputBindings(ctx context.Context, p protocol.SetWorkflowOutputBindingsParams) (protocol.DraftEditResult, error) {
	bindings, err := languageInput(p.Bindings)
	if err != nil {
		return protocol.DraftEditResult{}, err
	}
	return stepEdit(s, ctx, p.WorkspaceID, p.Revision, authoring.SetWorkflowOutputBindings,
		authoring.SetWorkflowOutputBindingsParams{Bindings: bindings})
}

func (s *Service) setStepInputMap(ctx context.Context, p protocol.SetStepInputMapParams) (protocol.DraftEditResult, error) {
	return stepEdit(s, ctx, p.WorkspaceID, p.Revision, authoring.SetStepInputMap,
		authoring.SetStepInputMapParams{StepID: p.StepID, InputMap: p.InputMap, Merge: p.Merge})
}

func (s *Service) setStepOutputMap(ctx context.Context, p protocol.SetStepOutputMapParams) (protocol.DraftEditResult, error) {
	return stepEdit(s, ctx, p.WorkspaceID, p.Revision, authoring.SetStepOutputMap,
		authoring.SetStepOutputMapParams{StepID: p.StepID, OutputMap: p.OutputMap, Merge: p.Merge})
}

func (s *Service) setWorkflowOutputMap(ctx context.Context, p protocol.SetWorkflowOutputMapParams) (protocol.DraftEditResult, error) {
	return stepEdit(s, ctx, p.WorkspaceID, p.Revision, authoring.SetWorkflowOutputMap,
		authoring.SetWorkflowOutputMapParams{OutputMap: p.OutputMap, Merge: p.Merge})
}
