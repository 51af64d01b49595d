package service

import (
	"context"

	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// passthrough calls a tool of a connection exposed through the MCP face
// (server.mcp.expose) as a one-step run of kind passthrough, recorded as
// started by the caller: the MCP face's gateway mode. A connection not
// exposed, or a tool its entry does not offer, is refused as not found,
// so that the method reaches exactly what the face lists.
func (s *Service) passthrough(ctx context.Context, p protocol.PassthroughParams) (protocol.RunResult, error) {
	e, ok := s.MCP.Exposed(p.Connection)
	if !ok {
		return protocol.RunResult{}, notFound("connection %q is not exposed through the MCP face (server.mcp.expose)", p.Connection)
	}
	if !e.Offers(p.Tool) {
		return protocol.RunResult{}, notFound("tool %q of connection %q is not offered through the MCP face (server.mcp.expose[].tools)", p.Tool, p.Connection)
	}
	r, err := s.Runs.Passthrough(ctx, runs.PassthroughRequest{
		Connection: p.Connection, Tool: p.Tool, Input: p.Arguments,
		StartedBy: startedBy(ctx), ClientSampling: deref(p.ClientSampling), Wait: s.runWait(p.Wait),
	})
	if err != nil {
		return protocol.RunResult{}, runsErr(err)
	}
	return s.runResult(ctx, r, nil)
}
