package service

import (
	"context"
	"sort"
	"strings"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/paging"
	"github.com/mcpflow/mcpflow/actors/records"
	"github.com/mcpflow/mcpflow/actors/sources"
	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// capabilityMethods are workflow.capabilities.*: list and inspect what
// workflows can use, and call one directly (call.go).
func (s *Service) capabilityMethods() map[string]rpc.Method {
	return map[string]rpc.Method{
		protocol.MethodCapabilitiesList:    forRead(s.listCapabilities),
		protocol.MethodCapabilitiesInspect: forRead(s.inspectCapability),
		protocol.MethodCapabilitiesCall:    forRun(s.callCapability),
	}
}

const kindNodeSpec = records.KindNodeSpec

// capabilities is what workflows can use now (sources.Capabilities).
func (s *Service) capabilities() sources.Capabilities {
	return sources.Capabilities{Catalogs: s.Catalogs, Connections: s.Connections}
}

// findCapability finds one capability of capabilities by its qualified
// name.
func (s *Service) findCapability(name string) (catalog.Capability, bool) {
	return s.capabilities().Find(name)
}

// capability finds one capability or fails with the reference's KeyError,
// or, when the name is of a source whose session is down, with why.
func (s *Service) capability(ctx context.Context, name string) (catalog.Capability, error) {
	if c, ok := s.findCapability(name); ok {
		return c, nil
	}
	if err := s.sourceDown(ctx, name); err != nil {
		return catalog.Capability{}, err
	}
	return catalog.Capability{}, notFound("unknown workflow capability %q", name)
}

// sourceDown is the error of a capability name whose connection's session
// does not work now, or has no catalog yet, or is disabled: its tools are
// not known, so the error says why rather than only that the name is
// unknown. It stays the reference's KeyError. nil for any other name.
func (s *Service) sourceDown(ctx context.Context, name string) error {
	var conn config.Connection
	for _, c := range s.connections() {
		if strings.HasPrefix(name, c.ID+".") && len(c.ID) > len(conn.ID) {
			conn = c
		}
	}
	if conn.ID == "" {
		return nil
	}
	if !conn.IsEnabled() {
		return notFound("unknown workflow capability %q: its source %q is disabled; enable it (mcpflow registry enable %s, then mcpflow registry apply)", name, conn.ID, conn.ID)
	}
	st := s.liveStatuses(ctx)[conn.ID]
	_, listed := s.Catalogs.Get(conn.ID)
	switch {
	case st.Failing():
		return notFound("source %q is down (%s): %s; %q cannot be called until it connects (mcpflow sources diagnose %s)",
			conn.ID, st.State, liveCause(conn, st), name, conn.ID)
	case !listed:
		return notFound("source %q has not listed its tools yet (session %s), so %q is not known yet: try again shortly, or see mcpflow sources diagnose %s",
			conn.ID, firstNonEmpty(string(st.State), "idle"), name, conn.ID)
	}
	return nil
}

func (s *Service) listCapabilities(_ context.Context, p protocol.ListCapabilitiesParams) (protocol.ListCapabilitiesResult, error) {
	offset, limit, err := pageParams(p.Cursor, p.Limit, 50)
	if err != nil {
		return protocol.ListCapabilitiesResult{}, err
	}
	caps := s.capabilities()
	if p.SourceID != nil && !caps.IsSource(*p.SourceID) {
		return protocol.ListCapabilitiesResult{}, notFound("unknown source %q", *p.SourceID)
	}
	rows := []protocol.CapabilitySummary{}
	for _, c := range caps.Matching(deref(p.SourceID), deref(p.Query)) {
		rows = append(rows, summarize(c))
	}
	page, next := paging.Cut(rows, offset, limit)
	return protocol.ListCapabilitiesResult{Capabilities: page, NextCursor: next, Total: len(rows)}, nil
}

func summarize(c catalog.Capability) protocol.CapabilitySummary {
	in, out := catalog.Properties(c.InputSchema), catalog.Properties(c.OutputSchema)
	sort.Strings(in)
	sort.Strings(out)
	return protocol.CapabilitySummary{
		Name: c.Name, SourceID: c.SourceID, Description: optional(c.Description), Outcomes: c.Outcomes,
		IsAsync: !c.Platform, InputFields: in, OutputFields: out, Kind: kindNodeSpec,
	}
}

func (s *Service) inspectCapability(ctx context.Context, p protocol.InspectCapabilityParams) (protocol.CapabilityDetail, error) {
	c, err := s.capability(ctx, p.QualifiedName)
	if err != nil {
		return protocol.CapabilityDetail{}, err
	}
	return protocol.CapabilityDetail{
		Name: c.Name, SourceID: c.SourceID, Description: optional(c.Description), Outcomes: c.Outcomes,
		InputSchema: c.InputSchema, OutputSchema: c.OutputSchema, IsAsync: !c.Platform,
		Kind: kindNodeSpec, WrapperHints: apiHints(workflow.HintsFor(c)), Annotations: &protocol.ToolHints{
			ReadOnly: c.Hints.ReadOnly, Idempotent: c.Hints.Idempotent, Destructive: c.Hints.Destructive, OpenWorld: c.Hints.OpenWorld},
	}, nil
}

// pageParams reads an offset cursor and a limit (default def); a bad one is
// a ValueError with paging's message.
func pageParams(cursor *string, limit *int, def int) (offset, n int, err error) {
	offset, n, err = paging.Read(cursor, limit, def)
	if err != nil {
		return 0, 0, invalid("%s", err)
	}
	return offset, n, nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
