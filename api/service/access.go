package service

import (
	"context"
	"slices"

	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// accessMethods say who the caller is (an extension).
func (s *Service) accessMethods() map[string]rpc.Method {
	return map[string]rpc.Method{
		protocol.MethodAccessWhoami: {Scope: access.Any, Handler: handle(s.whoami)},
	}
}

// whoami answers workflow.access.whoami from the caller the edge admitted.
func (s *Service) whoami(ctx context.Context, _ protocol.Empty) (protocol.WhoamiResult, error) {
	p, ok := access.PrincipalFrom(ctx)
	if !ok {
		p = access.Anonymous
	}
	res := protocol.WhoamiResult{Name: p.Name, Anonymous: p.IsAnonymous(), Scopes: []string{}, MCPDeployments: p.Deployments()}
	for _, sc := range p.Scopes() {
		res.Scopes = append(res.Scopes, string(sc))
	}
	if res.MCPDeployments == nil {
		res.MCPDeployments = []string{}
	}
	res.Methods = []string{}
	for name, m := range s.Methods() {
		if p.Allows(m.Scope) { // the edge's check of every call (edge.Server.permit)
			res.Methods = append(res.Methods, name)
		}
	}
	slices.Sort(res.Methods)
	return res, nil
}
