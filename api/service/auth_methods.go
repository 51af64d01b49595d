package service

import "github.com/mcpflow/mcpflow/api/protocol"

// authMethods are the admin auth records: list, inspect, save, delete.
func (s *Service) authMethods() map[string]Handler {
	return map[string]Handler{
		protocol.MethodAuthList:    handle(s.listAuth),
		protocol.MethodAuthInspect: handle(s.inspectAuth),
		protocol.MethodAuthSave:    handle(s.saveAuth),
		protocol.MethodAuthDelete:  handle(s.deleteAuth),
	}
}
