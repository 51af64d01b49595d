package service

import "github.com/mcpflow/mcpflow/api/protocol"

// authMethods are the admin auth records: list, inspect, save, delete,
// and the rotation of the key that seals them.
func (s *Service) authMethods() map[string]Method {
	return map[string]Method{
		protocol.MethodAuthList:      forAdmin(s.listAuth),
		protocol.MethodAuthInspect:   forAdmin(s.inspectAuth),
		protocol.MethodAuthSave:      forAdmin(s.saveAuth),
		protocol.MethodAuthDelete:    forAdmin(s.deleteAuth),
		protocol.MethodSecretsRotate: forAdmin(s.rotateSecrets),
	}
}
