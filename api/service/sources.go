package service

import (
	"context"
	"log/slog"
	"slices"
	"strings"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/paging"
	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/actors/sources"
	"github.com/mcpflow/mcpflow/actors/workflow/std"
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// sourceMethods are workflow.sources.*: list, inspect and diagnose.
func (s *Service) sourceMethods() map[string]rpc.Method {
	return map[string]rpc.Method{
		protocol.MethodSourcesList:    forRead(s.listSources),
		protocol.MethodSourcesInspect: forRead(s.inspectSource),
		// The resources of an exposed connection (resources.go).
		protocol.MethodSourcesResources:    forRead(s.sourceResources),
		protocol.MethodSourcesReadResource: forRead(s.readSourceResource),
		// The prompts of an exposed connection (prompts.go).
		protocol.MethodSourcesPrompts:   forRead(s.sourcePrompts),
		protocol.MethodSourcesGetPrompt: forRead(s.getSourcePrompt),
		// Completion of their arguments (completion.go).
		protocol.MethodSourcesComplete: forRead(s.completeSource),
		protocol.MethodSourcesDiagnose: forRead(s.diagnoseSource),
	}
}

// previewLimit is how many names per bucket a source row previews.
const previewLimit = 3

// Source diagnosis statuses.
const (
	diagnosisOK    = "ok"
	diagnosisError = "error"
)

// sourceEntry is one capability source as the API shows it: its status
// row and its whole inventory, with the connection and catalog a
// diagnosis checks.
type sourceEntry struct {
	status    protocol.SourceStatus
	inventory protocol.SourceCapabilityInventory
	conn      *config.Connection // nil for a platform source
	snapshot  *catalog.Snapshot  // the connection's catalog, if any
}

// sources projects every source (sources.Inventory) sorted by id.
func (s *Service) sources() []sourceEntry {
	all := sources.Inventory(s.connections(), s.Catalogs)
	out := make([]sourceEntry, 0, len(all))
	for _, src := range all {
		out = append(out, sourceEntryOf(src))
	}
	return out
}

func sourceEntryOf(src sources.Source) sourceEntry {
	e := sourceEntry{conn: src.Conn, snapshot: src.Catalog, inventory: protocol.SourceCapabilityInventory{
		Tools: []string{}, NodeSpecs: []string{}, NodeSpecDetails: []protocol.NodeSpecInventory{},
		Reducers: []string{}, ReducerDetails: []protocol.ReducerInventory{}, Prompts: nonNil(src.Prompts), Resources: nonNil(src.Resources),
	}}
	inv := &e.inventory
	for _, c := range src.NodeSpecs {
		inv.NodeSpecs = append(inv.NodeSpecs, c.Name)
		inv.NodeSpecDetails = append(inv.NodeSpecDetails, protocol.NodeSpecInventory{
			Name: c.Name, Description: optional(c.Description), Outcomes: nonNil(c.Outcomes),
			InputSchema: orEmpty(c.InputSchema), OutputSchema: orEmpty(c.OutputSchema),
			IsAsync: c.Async, AcceptsContext: c.AcceptsContext,
		})
	}
	if src.Conn != nil {
		// A connection's node specs are its MCP tools: count and list
		// them as tools too (issue 29: sources list said TOOLS 0).
		inv.Tools = append(inv.Tools, inv.NodeSpecs...)
	}
	for _, r := range src.Reducers {
		inv.Reducers = append(inv.Reducers, r.Name)
		inv.ReducerDetails = append(inv.ReducerDetails, protocol.ReducerInventory{
			Name: r.Name, Ref: protocol.CapabilityRef{Source: std.StdSource, CapabilityKey: strings.TrimPrefix(r.Name, std.StdSource+".")},
			Description: optional(r.Description), ConfigSchema: orEmpty(r.ConfigSchema),
		})
	}
	pol := src.Policy()
	e.status = protocol.SourceStatus{
		ID: src.ID, Kind: pol.Kind, Enabled: pol.Enabled,
		Visibility:  protocol.SourceVisibility{Planner: true, Client: true, AdminDashboard: true},
		Permissions: protocol.SourcePermissions{SafeForWorkflow: pol.SafeForWorkflow, CallsUpstream: pol.CallsUpstream},
		Policy:      protocol.SourcePolicy{Platform: pol.Platform, BindingRequired: pol.BindingRequired},
		Description: optional(pol.Description),
	}
	st := &e.status
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
	return e
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
	offset, limit, err := pageParams(p.Cursor, p.Limit, 50)
	if err != nil {
		return protocol.ListSourcesResult{}, err
	}
	all := s.sources()
	rows := make([]protocol.SourceStatus, 0, len(all))
	for _, src := range all {
		rows = append(rows, src.status)
	}
	page, next := paging.Cut(rows, offset, limit)
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
	res := protocol.InspectSourceResult{SourceStatus: src.status, Capabilities: src.inventory, Diagnostics: &diagnosis}
	if src.conn != nil {
		res.ConnectionLogs = s.connectionLogsOf(ctx, *src.conn)
	}
	return res, nil
}

// connectionLogsOf are c's own log messages, from its session's live
// status; none when that cannot be read (the inspect answers without
// them).
func (s *Service) connectionLogsOf(ctx context.Context, c config.Connection) []protocol.ConnectionLog {
	live, err := s.Supervisor.Statuses(ctx)
	if err != nil {
		slog.Warn("sources inspect: the session statuses could not be read", "source", c.ID, "err", err)
		return nil
	}
	for _, st := range live {
		if st.Connection == c.ID && len(st.Logs) > 0 {
			return connectionLogs(c, st.Logs)
		}
	}
	return nil
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
// auth record it uses, whether that record exists (auth_not_found),
// whether its scheme suits the transport (auth_scheme_not_supported),
// whether an OAuth source has a login in the store (needs_login),
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
	found, err := s.Sources.Diagnose(ctx, c)
	if err != nil {
		return protocol.SourceDiagnosis{}, sourcesErr(err)
	}
	diags := make([]protocol.DependencyDiag, 0, len(found.Diagnostics))
	for _, f := range found.Diagnostics {
		diags = append(diags, protocol.DependencyDiag(runs.DiagError(f.Code, f.Ref, &id, f.Message, f.Hint)))
	}
	transport := protocol.SourceTransportDiagnosis{Kind: optional(c.Transport.Kind), Configured: found.TransportConfigured}
	auth := authDiagnosis(found.Auth)
	cat := protocol.SourceCatalogDiagnosis{}
	if snap := src.snapshot; snap != nil {
		cat = protocol.SourceCatalogDiagnosis{HasSnapshot: true, FetchedAtEpochMs: &snap.FetchedAtEpochMs, MaxAgeSeconds: &snap.MaxAgeSeconds,
			NodeCount: len(snap.Tools), ResourceCount: len(snap.Resources), PromptCount: len(snap.Prompts)}
	}
	live := s.liveStatuses(ctx)
	var sess *protocol.SourceSessionDiagnosis
	if live != nil {
		st := live[id]
		sess = sessionDiagnosis(c, st)
		if d, failing := liveDiag(c, st, id); failing && !slices.ContainsFunc(diags, func(x protocol.DependencyDiag) bool { return x.Code == d.Code }) {
			diags = append(diags, protocol.DependencyDiag(d))
		}
	}
	status := diagnosisOK
	if len(diags) > 0 {
		status = diagnosisError
	}
	return protocol.SourceDiagnosis{
		SourceID: id, Status: status, Enabled: ptr(c.IsEnabled()),
		Transport: &transport, Auth: &auth, Catalog: &cat, Diagnostics: diags, Session: sess,
	}, nil
}

// authDiagnosis shows the auth record a connection uses (see
// sources.CheckAuth).
func authDiagnosis(a sources.AuthCheck) protocol.SourceAuthDiagnosis {
	switch {
	case a.Ref == "":
		return protocol.SourceAuthDiagnosis{TransportSupported: true}
	case !a.Present:
		return protocol.SourceAuthDiagnosis{AuthRef: &a.Ref, RecordPresent: ptr(false), TransportSupported: true}
	}
	return protocol.SourceAuthDiagnosis{AuthRef: &a.Ref, RecordPresent: ptr(true), Scheme: &a.Scheme, TransportSupported: a.TransportSupported}
}
