package service

import (
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// registryMethods are the source registry: list, inspect, add, update, enable, disable, remove, apply.
func (s *Service) registryMethods() map[string]rpc.Method {
	return map[string]rpc.Method{
		protocol.MethodRegistryList:    forAdmin(s.listRegistry),
		protocol.MethodRegistryInspect: forAdmin(s.inspectRegistry),
		protocol.MethodRegistryAdd:     forAdmin(s.addRegistry),
		protocol.MethodRegistryUpdate:  forAdmin(s.updateRegistry),
		protocol.MethodRegistryEnable:  forAdmin(s.enableRegistry),
		protocol.MethodRegistryDisable: forAdmin(s.disableRegistry),
		protocol.MethodRegistryRemove:  forAdmin(s.removeRegistry),
		protocol.MethodRegistryApply:   forAdmin(s.applyRegistry),
	}
}
