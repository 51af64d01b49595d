package service

import "github.com/mcpflow/mcpflow/api/protocol"

// stepEditMethods are the step edits of draft workspaces: add_step, add_step_from_capability, bind, branch, handle, update_capability_step,
// and create_empty (implemented with the document edits), where they begin.
func (s *Service) stepEditMethods() map[string]Handler {
	return map[string]Handler{
		protocol.MethodWorkspaceCreateEmpty:           handle(s.createEmpty),
		protocol.MethodWorkspaceAddStep:               handle(s.addStep),
		protocol.MethodWorkspaceAddStepFromCapability: handle(s.addStepFromCapability),
		protocol.MethodWorkspaceBind:                  handle(s.bind),
		protocol.MethodWorkspaceBranch:                handle(s.branch),
		protocol.MethodWorkspaceHandle:                handle(s.handleRoutes),
		protocol.MethodWorkspaceUpdateCapabilityStep:  handle(s.updateCapabilityStep),
	}
}
