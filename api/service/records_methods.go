package service

// recordMethods are artifact and deployment deletion, artifacts.save, capabilities.call, sources and the admin event log.
func (s *Service) recordMethods() map[string]Handler {
	return map[string]Handler{}
}
