package service

import (
	"context"

	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// healthMethods are workflow.health.
func (s *Service) healthMethods() map[string]rpc.Method {
	return map[string]rpc.Method{
		protocol.MethodHealth: forRead(s.health),
	}
}

func (s *Service) health(context.Context, protocol.Empty) (protocol.HealthResult, error) {
	return protocol.HealthResult{Status: "ok", StoreRoot: s.StoreRoot}, nil
}
