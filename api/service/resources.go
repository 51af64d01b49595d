package service

import (
	"context"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// exposedResources is the expose entry of a connection whose resources
// the MCP face offers (server.mcp.expose[].resources); any other is
// refused as not found, so that the resource methods reach exactly what
// the face lists.
func (s *Service) exposedResources(id string) (config.MCPExpose, error) {
	e, ok := s.exposed(id)
	if !ok || !e.Resources {
		return config.MCPExpose{}, notFound("connection %q does not expose its resources through the MCP face (server.mcp.expose[].resources)", id)
	}
	return e, nil
}

// sourceResources lists the resources of an exposed connection as its
// catalog holds them (none before its first listing).
func (s *Service) sourceResources(_ context.Context, p protocol.SourceResourcesParams) (protocol.SourceResourcesResult, error) {
	if _, err := s.exposedResources(p.SourceID); err != nil {
		return protocol.SourceResourcesResult{}, err
	}
	out := protocol.SourceResourcesResult{Resources: []protocol.SourceResource{}, ResourceTemplates: []protocol.SourceResourceTemplate{}}
	snap, ok := s.Catalogs.Get(p.SourceID)
	if !ok {
		return out, nil
	}
	for _, r := range snap.Resources {
		out.Resources = append(out.Resources, protocol.SourceResource{
			URI: r.URI, Name: r.Name, Title: optional(r.Title), Description: optional(r.Description), MIMEType: optional(r.MIMEType),
		})
	}
	for _, r := range snap.ResourceTemplates {
		out.ResourceTemplates = append(out.ResourceTemplates, protocol.SourceResourceTemplate{
			URITemplate: r.URITemplate, Name: r.Name, Title: optional(r.Title), Description: optional(r.Description), MIMEType: optional(r.MIMEType),
		})
	}
	return out, nil
}

// readSourceResource reads one resource of an exposed connection through
// its shared session actor (the one its workflows use).
func (s *Service) readSourceResource(ctx context.Context, p protocol.ReadSourceResourceParams) (protocol.ReadSourceResourceResult, error) {
	if _, err := s.exposedResources(p.SourceID); err != nil {
		return protocol.ReadSourceResourceResult{}, err
	}
	read, err := s.Runs.ReadResource(ctx, p.SourceID, p.URI)
	if err != nil {
		return protocol.ReadSourceResourceResult{}, upstream("%v", err)
	}
	out := protocol.ReadSourceResourceResult{Contents: []protocol.Object{}}
	contents, _ := read["contents"].([]any)
	for _, c := range contents {
		if o, ok := c.(map[string]any); ok {
			out.Contents = append(out.Contents, o)
		}
	}
	return out, nil
}
