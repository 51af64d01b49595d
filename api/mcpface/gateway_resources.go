package mcpface

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// Gateway mode, resources: the resources of the connections whose expose
// entry says "resources": true are offered beside the tools under their
// upstream URIs (so that a resource link in an exposed tool's result
// resolves through the face as it is), each named "<prefix>_<name>", and
// each read through the connection's shared session
// (workflow.sources.read_resource). The face knows which connection
// listed each URI: a read of a URI no exposed connection lists is not
// found.

// gatewayResource is one upstream resource offered by the face.
type gatewayResource struct {
	connection string
	res        *mcp.Resource
}

// gatewayResourceMethods are what listing and reading an exposed
// connection's resources take (the read scope).
var gatewayResourceMethods = []string{protocol.MethodSourcesResources, protocol.MethodSourcesReadResource}

// exposesResources reports whether an expose entry offers resources.
func (f *Face) exposesResources() bool {
	return slices.ContainsFunc(f.cfg.Expose, func(e config.MCPExpose) bool { return e.Resources })
}

// loadGatewayResources lists the resources of each connection exposed
// with resources, in the sorted order of the connections: a URI another
// connection listed first is not offered again (logged). A connection
// whose resources cannot be read is logged and named in failed.
func (f *Face) loadGatewayResources(ctx context.Context) ([]gatewayResource, map[string]bool) {
	failed := map[string]bool{}
	entries := slices.SortedFunc(slices.Values(f.cfg.Expose), func(a, b config.MCPExpose) int { return strings.Compare(a.Connection, b.Connection) })
	var out []gatewayResource
	byURI := map[string]string{}
	for _, e := range entries {
		if !e.Resources {
			continue
		}
		var listed protocol.SourceResourcesResult
		err := f.watch.Call(ctx, protocol.MethodSourcesResources, protocol.SourceResourcesParams{SourceID: e.Connection}, &listed)
		if notFound(err) {
			continue // no longer a source, or no longer exposed: it offers nothing
		}
		if err != nil {
			f.log.Warn("mcp face: an exposed connection's resources are not read again", "connection", e.Connection, "err", err)
			failed[e.Connection] = true
			continue
		}
		for _, r := range listed.Resources {
			if first, taken := byURI[r.URI]; taken {
				f.log.Warn("mcp face: a resource URI is exposed by another connection first", "uri", r.URI, "connection", e.Connection, "offered_by", first)
				continue
			}
			byURI[r.URI] = e.Connection
			out = append(out, gatewayResource{connection: e.Connection, res: &mcp.Resource{
				URI: r.URI, Name: e.DefaultPrefix() + gatewaySep + cmpOr(r.Name, r.URI), Title: deref(r.Title),
				Description: deref(r.Description), MIMEType: deref(r.MIMEType),
			}})
		}
	}
	return out, failed
}

// refreshGatewayResources reads the exposed resources again; a
// connection whose resources cannot be read keeps those it was offered
// with.
func (f *Face) refreshGatewayResources(ctx context.Context) []gatewayResource {
	if !f.exposesResources() {
		return nil
	}
	found, failed := f.loadGatewayResources(ctx)
	if len(failed) == 0 {
		return found
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.resources {
		if failed[r.connection] {
			found = append(found, r)
		}
	}
	return found
}

// offerResources brings s's resources in line with f.resources (those
// of the connections s's principal sees, when it may list and read
// them): go-sdk tells the session's client of each change
// (notifications/resources/list_changed). Under f.mu.
func (f *Face) offerResources(s *served) {
	want := map[string]gatewayResource{}
	if s.refusal(gatewayResourceMethods) == nil {
		for _, r := range f.resources {
			if s.who.SeesConnection(r.connection) {
				want[r.res.URI] = r
			}
		}
	}
	var gone []string
	for uri := range s.resources {
		if _, ok := want[uri]; !ok {
			gone = append(gone, uri)
		}
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		s.srv.RemoveResources(gone...)
		for _, uri := range gone {
			delete(s.resources, uri)
		}
	}
	for _, uri := range slices.Sorted(func(yield func(string) bool) {
		for uri := range want {
			if !yield(uri) {
				return
			}
		}
	}) {
		r := want[uri]
		def, err := json.Marshal(struct {
			Connection string
			Resource   *mcp.Resource
		}{r.connection, r.res})
		if err != nil || s.resources[uri] == string(def) {
			continue
		}
		s.srv.AddResource(r.res, f.readHandler(s, r.connection))
		s.resources[uri] = string(def)
	}
}

// readHandler reads a resource of connection through the workflow API as
// s's principal: the upstream's contents, unchanged.
func (f *Face) readHandler(s *served, connection string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		var read protocol.ReadSourceResourceResult
		err := s.api.Call(ctx, protocol.MethodSourcesReadResource, protocol.ReadSourceResourceParams{SourceID: connection, URI: req.Params.URI}, &read)
		if err != nil {
			return nil, sdkError(err)
		}
		raw, err := json.Marshal(read)
		if err != nil {
			return nil, fmt.Errorf("encode the contents of %s: %w", req.Params.URI, err)
		}
		var out mcp.ReadResourceResult
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, fmt.Errorf("the contents of %s: %w", req.Params.URI, err)
		}
		return &out, nil
	}
}
