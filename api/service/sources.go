package service

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/std"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// previewLimit is how many names per bucket a source row previews.
const previewLimit = 3

// Source kinds.
const (
	sourceSystem     = "system"
	sourceConnection = "connection"
)

// Source diagnosis statuses.
const (
	diagnosisOK    = "ok"
	diagnosisError = "error"
)

// platformDescriptions describe the built-in sources.
var platformDescriptions = map[string]string{
	std.StdSource:     "Workflow standard-library node specs and reducers.",
	std.RecipesSource: "First-party recipes composed from standard node specs.",
	"wf.source":       "Platform helpers that read resources of bound sources.",
}

// source is one capability source: a platform source or a configured
// connection, with the sorted names it owns per bucket.
type sourceEntry struct {
	status         protocol.SourceStatus
	inventory      protocol.SourceCapabilityInventory
	conn           *config.Connection // nil for a platform source
	snapshot       *catalog.Snapshot  // the connection's catalog, if any
	platformSource bool
}

// sources lists every source sorted by id: the platform sources wf.std,
// wf.recipes and wf.source, and each configured connection, enabled or
// not. A connection owns the tools of its last catalog as node specs (as
// in the reference, its tools bucket is for tools proxied to MCP
// clients, which mcpflow does not do) and its resources and prompts.
func (s *Service) sources() []sourceEntry {
	byID := map[string]*sourceEntry{}
	for _, c := range workflow.Builtins() {
		src, ok := byID[c.SourceID]
		if !ok {
			src = platformSource(c.SourceID)
			byID[c.SourceID] = src
		}
		addNodeSpec(&src.inventory, c, !c.Platform, c.Name == workflow.ReadResource)
	}
	if src, ok := byID[std.StdSource]; ok {
		for _, r := range std.Reducers() {
			src.inventory.Reducers = append(src.inventory.Reducers, r.Name)
			src.inventory.ReducerDetails = append(src.inventory.ReducerDetails, protocol.ReducerInventory{
				Name: r.Name, Ref: protocol.CapabilityRef{Source: std.StdSource, CapabilityKey: strings.TrimPrefix(r.Name, std.StdSource+".")},
				Description: optional(r.Description), ConfigSchema: orEmpty(r.ConfigSchema),
			})
		}
	}
	conns := s.connections()
	for i := range conns {
		c := conns[i]
		src := &sourceEntry{conn: &c, status: protocol.SourceStatus{
			ID: c.ID, Kind: sourceConnection, Enabled: c.IsEnabled(),
			Visibility:  protocol.SourceVisibility{Planner: true, Client: true, AdminDashboard: true},
			Permissions: protocol.SourcePermissions{CallsUpstream: true},
			Policy:      protocol.SourcePolicy{BindingRequired: true},
			Description: optional(fmt.Sprintf("MCP connection %s; no catalog yet.", c.ID)),
		}, inventory: emptyInventory()}
		if snap, ok := s.Catalogs.Get(c.ID); ok {
			src.snapshot = &snap
			src.status.Description = optional(fmt.Sprintf("MCP connection %s; tools, resources and prompts from its catalog.", c.ID))
			for _, capability := range snap.Capabilities() {
				addNodeSpec(&src.inventory, capability, true, false)
			}
			for _, r := range snap.Resources {
				src.inventory.Resources = append(src.inventory.Resources, c.ID+"."+firstNonEmpty(r.Name, r.URI))
			}
			for _, p := range snap.Prompts {
				src.inventory.Prompts = append(src.inventory.Prompts, c.ID+"."+p.Name)
			}
		}
		byID[c.ID] = src
	}
	out := make([]sourceEntry, 0, len(byID))
	for _, src := range byID {
		src.finish()
		out = append(out, *src)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].status.ID < out[j].status.ID })
	return out
}

func platformSource(id string) *sourceEntry {
	return &sourceEntry{platformSource: true, inventory: emptyInventory(), status: protocol.SourceStatus{
		ID: id, Kind: sourceSystem, Enabled: true,
		Visibility:  protocol.SourceVisibility{Planner: true, Client: true, AdminDashboard: true},
		Permissions: protocol.SourcePermissions{SafeForWorkflow: true, CallsUpstream: id == "wf.source"},
		Policy:      protocol.SourcePolicy{Platform: true},
		Description: optional(platformDescriptions[id]),
	}}
}

func emptyInventory() protocol.SourceCapabilityInventory {
	return protocol.SourceCapabilityInventory{
		Tools: []string{}, NodeSpecs: []string{}, NodeSpecDetails: []protocol.NodeSpecInventory{},
		Reducers: []string{}, ReducerDetails: []protocol.ReducerInventory{}, Prompts: []string{}, Resources: []string{},
	}
}

func addNodeSpec(inv *protocol.SourceCapabilityInventory, c catalog.Capability, async, acceptsContext bool) {
	inv.NodeSpecs = append(inv.NodeSpecs, c.Name)
	inv.NodeSpecDetails = append(inv.NodeSpecDetails, protocol.NodeSpecInventory{
		Name: c.Name, Description: optional(c.Description), Outcomes: nonNil(c.Outcomes),
		InputSchema: orEmpty(c.InputSchema), OutputSchema: orEmpty(c.OutputSchema),
		IsAsync: async, AcceptsContext: acceptsContext,
	})
}

// finish sorts the inventory and fills the counts and previews.
func (src *sourceEntry) finish() {
	inv := &src.inventory
	for _, names := range [][]string{inv.Tools, inv.NodeSpecs, inv.Reducers, inv.Prompts, inv.Resources} {
		sort.Strings(names)
	}
	sort.Slice(inv.NodeSpecDetails, func(i, j int) bool { return inv.NodeSpecDetails[i].Name < inv.NodeSpecDetails[j].Name })
	sort.Slice(inv.ReducerDetails, func(i, j int) bool { return inv.ReducerDetails[i].Name < inv.ReducerDetails[j].Name })
	st := &src.status
	st.ToolCount, st.NodeSpecCount, st.ReducerCount = len(inv.Tools), len(inv.NodeSpecs), len(inv.Reducers)
	st.PromptCount, st.ResourceCount = len(inv.Prompts), len(inv.Resources)
	st.Preview = protocol.SourceCapabilityPreview{
		Tools: previewNames(inv.Tools), NodeSpecs: previewNames(inv.NodeSpecs), Reducers: previewNames(inv.Reducers),
		Prompts: previewNames(inv.Prompts), Resources: previewNames(inv.Resources),
	}
	st.HasMore = protocol.SourceCapabilityHasMore{
		Tools: len(inv.Tools) > previewLimit, NodeSpecs: len(inv.NodeSpecs) > previewLimit, Reducers: len(inv.Reducers) > previewLimit,
		Prompts: len(inv.Prompts) > previewLimit, Resources: len(inv.Resources) > previewLimit,
	}
}

func previewNames(names []string) []string {
	return append([]string{}, names[:min(len(names), previewLimit)]...)
}

// findSource returns one source or the reference's KeyError.
func (s *Service) findSource(id string) (sourceEntry, error) {
	for _, src := range s.sources() {
		if src.status.ID == id {
			return src, nil
		}
	}
	return sourceEntry{}, notFound("unknown source %q", id)
}

func (s *Service) listSources(_ context.Context, p protocol.ListSourcesParams) (protocol.ListSourcesResult, error) {
	offset, limit, err := paging(p.Cursor, p.Limit, 50)
	if err != nil {
		return protocol.ListSourcesResult{}, err
	}
	all := s.sources()
	rows := make([]protocol.SourceStatus, 0, len(all))
	for _, src := range all {
		rows = append(rows, src.status)
	}
	page, next := pageOf(rows, offset, limit)
	return protocol.ListSourcesResult{Sources: page, NextCursor: next, Total: len(rows)}, nil
}

// inspectSource answers workflow.sources.inspect: the status row, the
// whole inventory and the diagnosis, which is {status: "error", message:
// "Diagnostics unavailable"} if it could not be made.
func (s *Service) inspectSource(ctx context.Context, p protocol.InspectSourceParams) (protocol.InspectSourceResult, error) {
	src, err := s.findSource(p.SourceID)
	if err != nil {
		return protocol.InspectSourceResult{}, err
	}
	diagnosis, err := s.diagnosis(ctx, src)
	if err != nil {
		diagnosis = protocol.SourceDiagnosis{SourceID: src.status.ID, Status: diagnosisError, Diagnostics: []protocol.DependencyDiag{}, Message: ptr("Diagnostics unavailable")}
	}
	return protocol.InspectSourceResult{SourceStatus: src.status, Capabilities: src.inventory, Diagnostics: &diagnosis}, nil
}

func (s *Service) diagnoseSource(ctx context.Context, p protocol.InspectSourceParams) (protocol.SourceDiagnosis, error) {
	src, err := s.findSource(p.SourceID)
	if err != nil {
		return protocol.SourceDiagnosis{}, err
	}
	return s.diagnosis(ctx, src)
}

// diagnosis checks a source as the reference's diagnostics provider does:
// whether its transport is configured (source_transport_missing), which
// auth record it uses, whether that record exists (auth_not_found) and
// whether its scheme suits the transport (auth_scheme_not_supported),
// and what its catalog holds. Status is "error" when any diagnostic is
// found. Unlike the reference (Appendix C.7) the transport kind is read
// from the typed transport, so every configured source reports its real
// kind. Nothing secret is shown: no command, URL, header or env value,
// no auth payload.
func (s *Service) diagnosis(ctx context.Context, src sourceEntry) (protocol.SourceDiagnosis, error) {
	id := src.status.ID
	if src.conn == nil {
		return protocol.SourceDiagnosis{
			SourceID: id, Status: diagnosisOK, Enabled: ptr(true), Diagnostics: []protocol.DependencyDiag{},
			Message: ptr(id + " is a platform source: built in, with no transport, auth record or catalog to check."),
		}, nil
	}
	c := *src.conn
	diags := []protocol.DependencyDiag{}
	transport := protocol.SourceTransportDiagnosis{Kind: optional(c.Transport.Kind), Configured: transportConfigured(c.Transport)}
	if !transport.Configured {
		diags = append(diags, diagError("source_transport_missing", id, &id,
			fmt.Sprintf("source %q has no MCP transport configured", id), "configure a stdio or http transport for the source, then restart the server"))
	}
	auth, err := s.authDiagnosis(ctx, c)
	if err != nil {
		return protocol.SourceDiagnosis{}, err
	}
	if auth.AuthRef != nil && auth.RecordPresent != nil && !*auth.RecordPresent {
		diags = append(diags, diagError("auth_not_found", *auth.AuthRef, &id,
			fmt.Sprintf("source %q uses auth record %q, which does not exist", id, *auth.AuthRef),
			"save an auth record under that id (workflow.admin.auth.save), or change the source's auth_ref"))
	}
	if auth.Scheme != nil && !auth.TransportSupported {
		diags = append(diags, diagError("auth_scheme_not_supported", *auth.AuthRef, &id,
			fmt.Sprintf("source %q uses the %s transport, which cannot use auth record %q of scheme %q", id, firstNonEmpty(c.Transport.Kind, "unknown"), *auth.AuthRef, *auth.Scheme),
			"use env auth for a stdio source, or bearer, headers or oauth_refresh_token auth for an http source"))
	}
	cat := protocol.SourceCatalogDiagnosis{}
	if snap := src.snapshot; snap != nil {
		cat = protocol.SourceCatalogDiagnosis{HasSnapshot: true, FetchedAtEpochMs: &snap.FetchedAtEpochMs, MaxAgeSeconds: &snap.MaxAgeSeconds,
			NodeCount: len(snap.Tools), ResourceCount: len(snap.Resources), PromptCount: len(snap.Prompts)}
	}
	status := diagnosisOK
	if len(diags) > 0 {
		status = diagnosisError
	}
	return protocol.SourceDiagnosis{
		SourceID: id, Status: status, Enabled: ptr(c.IsEnabled()),
		Transport: &transport, Auth: &auth, Catalog: &cat, Diagnostics: diags,
	}, nil
}

func transportConfigured(t config.Transport) bool {
	switch t.Kind {
	case config.TransportStdio:
		return t.Command != ""
	case config.TransportHTTP, config.TransportSSE:
		return t.URL != ""
	}
	return false
}

// authDiagnosis resolves the auth record of a connection as the runtime
// does: its auth_ref (or a legacy metadata.auth_ref) when set, whose
// record must then exist; else a record named after the connection, if
// there is one (no record at all is fine: the source needs no auth).
func (s *Service) authDiagnosis(ctx context.Context, c config.Connection) (protocol.SourceAuthDiagnosis, error) {
	ref := deref(c.AuthRef)
	if ref == "" {
		ref, _ = c.Metadata["auth_ref"].(string)
	}
	explicit := ref != ""
	if !explicit {
		ref = c.ID
	}
	rec, err := s.Store.GetAuth(ctx, ref)
	switch {
	case errors.Is(err, store.ErrNotFound) && explicit:
		return protocol.SourceAuthDiagnosis{AuthRef: &ref, RecordPresent: ptr(false), TransportSupported: true}, nil
	case errors.Is(err, store.ErrNotFound):
		return protocol.SourceAuthDiagnosis{TransportSupported: true}, nil
	case err != nil:
		return protocol.SourceAuthDiagnosis{}, upstream("auth record %q of source %q: %v", ref, c.ID, err)
	}
	return protocol.SourceAuthDiagnosis{
		AuthRef: &ref, RecordPresent: ptr(true), Scheme: &rec.Scheme,
		TransportSupported: schemeSupported(c.Transport.Kind, rec.Scheme),
	}, nil
}

// schemeSupported says whether an auth scheme can be bound to a
// transport: env to stdio; bearer, headers and oauth_refresh_token to
// http.
func schemeSupported(transport, scheme string) bool {
	switch transport {
	case config.TransportStdio:
		return scheme == "env"
	case config.TransportHTTP, config.TransportSSE:
		return scheme == "bearer" || scheme == "headers" || scheme == "oauth_refresh_token"
	}
	return false
}
