package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// passthrough calls a tool of a connection exposed through the MCP face
// (server.mcp.expose) as a one-step run of kind passthrough, recorded as
// started by the caller: the MCP face's gateway mode. On a connection
// exposed per_client, the call goes to the upstream session of the
// caller's client session (clientKey). A connection not
// exposed, or a tool its entry does not offer, is refused as not found,
// so that the method reaches exactly what the face lists.
func (s *Service) passthrough(ctx context.Context, p protocol.PassthroughParams) (protocol.RunResult, error) {
	e, ok := s.exposed(p.Connection)
	if !ok {
		return protocol.RunResult{}, notFound("connection %q is not exposed through the MCP face (server.mcp.expose)", p.Connection)
	}
	if !e.Offers(p.Tool) {
		return protocol.RunResult{}, notFound("tool %q of connection %q is not offered through the MCP face (server.mcp.expose[].tools)", p.Tool, p.Connection)
	}
	req := runs.PassthroughRequest{
		Connection: p.Connection, Tool: p.Tool, Input: p.Arguments,
		StartedBy: startedBy(ctx), ClientSampling: deref(p.ClientSampling), Wait: s.runWait(p.Wait),
	}
	req.Transient = !e.Records()
	if e.Scope == config.ExposePerClient {
		req.ClientSession = clientKey(ctx, deref(p.ClientSession))
	}
	r, err := s.Runs.Passthrough(ctx, req)
	if err != nil {
		return protocol.RunResult{}, runsErr(err)
	}
	return s.runResult(ctx, r, nil)
}

// releaseClient closes the upstream sessions of the caller's client
// session p.ClientSession, on every connection exposed per_client.
func (s *Service) releaseClient(ctx context.Context, p protocol.PassthroughReleaseParams) (protocol.PassthroughReleaseParams, error) {
	s.Runs.ReleaseClient(clientKey(ctx, p.ClientSession))
	return p, nil
}

// clientKey is the key of the upstream sessions of client session id of
// the caller: a digest of both, so that one token's session ids never
// reach another's upstream sessions, and the id itself (which a client
// may hold as a credential) is kept nowhere. A call with no session (a
// 2026-era stateless request) has its caller's key.
func clientKey(ctx context.Context, id string) string {
	sum := sha256.Sum256([]byte(startedBy(ctx) + "\x00" + id))
	return hex.EncodeToString(sum[:16])
}
