package service

// documentEditMethods are the whole-document and binding edits of draft workspaces: patch, create_empty, create_wrapper, set_contract, the map and binding setters, remove_*.
func (s *Service) documentEditMethods() map[string]Handler {
	return map[string]Handler{}
}
