package mcpface

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

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

// gatewayResource is one upstream resource, or resource template,
// offered by the face.
type gatewayResource struct {
	connection string
	res        *mcp.Resource         // nil for a template
	tmpl       *mcp.ResourceTemplate // nil for a resource
}

// key names r among what a server offers: its URI, or its URI template.
func (r gatewayResource) key() string {
	if r.tmpl != nil {
		return "template " + r.tmpl.URITemplate
	}
	return "resource " + r.res.URI
}

// remove withdraws the offers of keys from srv.
func removeResources(srv *mcp.Server, keys []string) {
	for _, k := range keys {
		if t, ok := strings.CutPrefix(k, "template "); ok {
			srv.RemoveResourceTemplates(t)
		} else {
			srv.RemoveResources(strings.TrimPrefix(k, "resource "))
		}
	}
}

// gatewayResourceMethods are what listing and reading an exposed
// connection's resources take (the read scope).
var gatewayResourceMethods = []string{protocol.MethodSourcesResources, protocol.MethodSourcesReadResource}

// loadGatewayResources lists the resources of each connection exposed
// with resources, and their resource templates, in the sorted order of
// the connections: a URI (or URI template) another connection listed
// first is not offered again (logged). A connection
// whose resources cannot be read is logged and named in failed.
func (f *Face) loadGatewayResources(ctx context.Context, exposed []config.MCPExpose) ([]gatewayResource, map[string]bool) {
	failed := map[string]bool{}
	entries := slices.SortedFunc(slices.Values(exposed), func(a, b config.MCPExpose) int { return strings.Compare(a.Connection, b.Connection) })
	var out []gatewayResource
	byKey := map[string]string{}
	add := func(r gatewayResource) {
		if first, taken := byKey[r.key()]; taken {
			f.log.Warn("mcp face: a resource is exposed by another connection first", "resource", r.key(), "connection", r.connection, "offered_by", first)
			return
		}
		byKey[r.key()] = r.connection
		out = append(out, r)
	}
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
			add(gatewayResource{connection: e.Connection, res: &mcp.Resource{
				URI: r.URI, Name: e.DefaultPrefix() + gatewaySep + cmpOr(r.Name, r.URI), Title: deref(r.Title),
				Description: deref(r.Description), MIMEType: deref(r.MIMEType),
			}})
		}
		for _, r := range listed.ResourceTemplates {
			if _, err := uritemplate.New(r.URITemplate); err != nil {
				f.log.Warn("mcp face: an exposed resource template is not offered", "connection", e.Connection, "uri_template", r.URITemplate, "err", err)
				continue
			}
			add(gatewayResource{connection: e.Connection, tmpl: &mcp.ResourceTemplate{
				URITemplate: r.URITemplate, Name: e.DefaultPrefix() + gatewaySep + cmpOr(r.Name, r.URITemplate), Title: deref(r.Title),
				Description: deref(r.Description), MIMEType: deref(r.MIMEType),
			}})
		}
	}
	return out, failed
}

// refreshGatewayResources reads the exposed resources again; a
// connection whose resources cannot be read keeps those it was offered
// with.
func (f *Face) refreshGatewayResources(ctx context.Context, exposed []config.MCPExpose) []gatewayResource {
	if !exposesResources(exposed) {
		return nil
	}
	found, failed := f.loadGatewayResources(ctx, exposed)
	if len(failed) == 0 {
		return found
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return keepOffered(found, f.resources, failed, func(r gatewayResource) string { return r.connection })
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
				want[r.key()] = r
			}
		}
	}
	syncOffers(s.resources, want,
		func(r gatewayResource) any { return []any{r.connection, r.res, r.tmpl} },
		func(gone []string) { removeResources(s.srv, gone) },
		func(r gatewayResource) {
			if r.tmpl != nil {
				s.srv.AddResourceTemplate(r.tmpl, f.readHandler(s, r.connection))
			} else {
				s.srv.AddResource(r.res, f.readHandler(s, r.connection))
			}
		})
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
