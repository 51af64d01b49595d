package service

// stepEditMethods are the step edits of draft workspaces: add_step, add_step_from_capability, bind, branch, handle, update_capability_step.
func (s *Service) stepEditMethods() map[string]Handler {
	return map[string]Handler{}
}
