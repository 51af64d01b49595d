package service

import (
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// documentEditMethods are the whole-document and binding edits of draft workspaces: patch, create_empty, create_wrapper, set_contract, the map and binding setters, remove_*.
// (create_empty, implemented in document_edits.go, is registered with the
// step edits.)
func (s *Service) documentEditMethods() map[string]rpc.Method {
	return map[string]rpc.Method{
		protocol.MethodDraftsPatch:                        forAuthor(s.patchDraft),
		protocol.MethodDraftsCreateFromCapability:         forAuthor(s.createFromCapability),
		protocol.MethodWorkspacePatch:                     forAuthor(s.patchWorkspace),
		protocol.MethodWorkspaceCreateWrapper:             forAuthor(s.createWrapper),
		protocol.MethodWorkspaceSetContract:               forAuthor(s.setContract),
		protocol.MethodWorkspaceSetStepInputMap:           forAuthor(s.setStepInputMap),
		protocol.MethodWorkspaceSetStepInputBindings:      forAuthor(s.setStepInputBindings),
		protocol.MethodWorkspaceSetStepOutputMap:          forAuthor(s.setStepOutputMap),
		protocol.MethodWorkspaceSetStepOutputBindings:     forAuthor(s.setStepOutputBindings),
		protocol.MethodWorkspaceSetWorkflowOutputMap:      forAuthor(s.setWorkflowOutputMap),
		protocol.MethodWorkspaceSetWorkflowOutputBindings: forAuthor(s.setWorkflowOutputBindings),
		protocol.MethodWorkspaceRemoveRoute:               forAuthor(s.removeRoute),
		protocol.MethodWorkspaceRemoveStep:                forAuthor(s.removeStep),
		protocol.MethodWorkspaceRemoveBinding:             forAuthor(s.removeBinding),
	}
}
