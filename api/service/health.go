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

// health answers workflow.health: status is "ok" while the server
// answers (the manifest's const); sources says whether every enabled
// connection's session works (an extension).
func (s *Service) health(ctx context.Context, _ protocol.Empty) (protocol.HealthResult, error) {
	return protocol.HealthResult{Status: "ok", StoreRoot: s.StoreRoot, Sources: s.SourcesHealth(ctx)}, nil
}
