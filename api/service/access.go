package service

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcpflow/mcpflow/actors/config"
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
	face, err := s.mcpFace(p)
	if err != nil {
		return protocol.WhoamiResult{}, err
	}
	res := protocol.WhoamiResult{Name: p.Name, Anonymous: p.IsAnonymous(), Scopes: []string{},
		MCPDeployments: nonNil(p.Deployments()), MCPConnections: nonNil(p.Connections()), MCPFace: face}
	for _, sc := range p.Scopes() {
		res.Scopes = append(res.Scopes, string(sc))
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

// mcpFace is server.mcp as the MCP face offers it to p: its defaults
// filled in, and the exposed connections p sees (server.mcp.expose's and
// the sources' own expose blocks), so that a face of its
// own (`mcpflow mcp`) offers what /mcp does.
func (s *Service) mcpFace(p access.Principal) (*protocol.MCPFace, error) {
	var cfg config.MCP
	if s.MCP != nil {
		cfg = *s.MCP
	}
	face := &protocol.MCPFace{Tools: cmp.Or(cfg.Tools, config.MCPToolsAuto), MaxTools: cmp.Or(cfg.MaxTools, config.DefaultMCPMaxTools),
		Deployments: nonNil(cfg.Deployments), Authoring: cfg.Authoring, HeartbeatMS: cmp.Or(cfg.HeartbeatMS, config.DefaultMCPHeartbeat), Expose: []protocol.Object{}}
	for _, e := range s.exposures() {
		if !p.SeesConnection(e.Connection) {
			continue
		}
		raw, err := json.Marshal(e)
		var entry protocol.Object
		if err == nil {
			err = json.Unmarshal(raw, &entry)
		}
		if err != nil {
			return nil, fmt.Errorf("encode server.mcp.expose %q: %w", e.Connection, err)
		}
		face.Expose = append(face.Expose, entry)
	}
	return face, nil
}
