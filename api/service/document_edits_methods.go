package service

import "github.com/mcpflow/mcpflow/api/protocol"

// documentEditMethods are the whole-document and binding edits of draft workspaces: patch, create_empty, create_wrapper, set_contract, the map and binding setters, remove_*.
// (create_empty, implemented in document_edits.go, is registered with the
// step edits.)
func (s *Service) documentEditMethods() map[string]Handler {
	return map[string]Handler{
		protocol.MethodDraftsPatch:                        handle(s.patchDraft),
		protocol.MethodDraftsCreateFromCapability:         handle(s.createFromCapability),
		protocol.MethodWorkspacePatch:                     handle(s.patchWorkspace),
		protocol.MethodWorkspaceCreateWrapper:             handle(s.createWrapper),
		protocol.MethodWorkspaceSetContract:               handle(s.setContract),
		protocol.MethodWorkspaceSetStepInputMap:           handle(s.setStepInputMap),
		protocol.MethodWorkspaceSetStepInputBindings:      handle(s.setStepInputBindings),
		protocol.MethodWorkspaceSetStepOutputMap:          handle(s.setStepOutputMap),
		protocol.MethodWorkspaceSetStepOutputBindings:     handle(s.setStepOutputBindings),
		protocol.MethodWorkspaceSetWorkflowOutputMap:      handle(s.setWorkflowOutputMap),
		protocol.MethodWorkspaceSetWorkflowOutputBindings: handle(s.setWorkflowOutputBindings),
		protocol.MethodWorkspaceRemoveRoute:               handle(s.removeRoute),
		protocol.MethodWorkspaceRemoveStep:                handle(s.removeStep),
		protocol.MethodWorkspaceRemoveBinding:             handle(s.removeBinding),
	}
}
