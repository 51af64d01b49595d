package service

import (
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// authMethods are the admin auth records: list, inspect, save, delete,
// and the rotation of the key that seals them.
func (s *Service) authMethods() map[string]rpc.Method {
	return map[string]rpc.Method{
		protocol.MethodAuthList:      forAdmin(s.listAuth),
		protocol.MethodAuthInspect:   forAdmin(s.inspectAuth),
		protocol.MethodAuthSave:      forAdmin(s.saveAuth),
		protocol.MethodAuthDelete:    forAdmin(s.deleteAuth),
		protocol.MethodSecretsRotate: forAdmin(s.rotateSecrets),
	}
}
