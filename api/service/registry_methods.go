package service

import "github.com/mcpflow/mcpflow/api/protocol"

// registryMethods are the source registry: list, inspect, add, update, enable, disable, remove, apply.
func (s *Service) registryMethods() map[string]Handler {
	return map[string]Handler{
		protocol.MethodRegistryList:    handle(s.listRegistry),
		protocol.MethodRegistryInspect: handle(s.inspectRegistry),
		protocol.MethodRegistryAdd:     handle(s.addRegistry),
		protocol.MethodRegistryUpdate:  handle(s.updateRegistry),
		protocol.MethodRegistryEnable:  handle(s.enableRegistry),
		protocol.MethodRegistryDisable: handle(s.disableRegistry),
		protocol.MethodRegistryRemove:  handle(s.removeRegistry),
		protocol.MethodRegistryApply:   handle(s.applyRegistry),
	}
}
