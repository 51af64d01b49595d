package service

// registryMethods are the source registry: list, inspect, add, update, enable, disable, remove, apply.
func (s *Service) registryMethods() map[string]Handler {
	return map[string]Handler{}
}
