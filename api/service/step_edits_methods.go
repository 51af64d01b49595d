package service

import (
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// stepEditMethods are the step edits of draft workspaces: add_step, add_step_from_capability, bind, branch, handle, update_capability_step,
// and create_empty (implemented with the document edits), where they begin.
func (s *Service) stepEditMethods() map[string]rpc.Method {
	return map[string]rpc.Method{
		protocol.MethodWorkspaceCreateEmpty:           forAuthor(s.createEmpty),
		protocol.MethodWorkspaceAddStep:               forAuthor(s.addStep),
		protocol.MethodWorkspaceAddStepFromCapability: forAuthor(s.addStepFromCapability),
		protocol.MethodWorkspaceBind:                  forAuthor(s.bind),
		protocol.MethodWorkspaceBranch:                forAuthor(s.branch),
		protocol.MethodWorkspaceHandle:                forAuthor(s.handleRoutes),
		protocol.MethodWorkspaceUpdateCapabilityStep:  forAuthor(s.updateCapabilityStep),
	}
}
