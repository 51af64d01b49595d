package service

// authMethods are the admin auth records: list, inspect, save, delete.
func (s *Service) authMethods() map[string]Handler {
	return map[string]Handler{}
}
