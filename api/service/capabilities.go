package service

import (
	"context"
	"sort"

	"github.com/mcpflow/mcpflow/actors/catalog"
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

// capability finds one capability or fails with the reference's KeyError.
func (s *Service) capability(name string) (catalog.Capability, error) {
	if c, ok := s.findCapability(name); ok {
		return c, nil
	}
	return catalog.Capability{}, notFound("unknown workflow capability %q", name)
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

func (s *Service) inspectCapability(_ context.Context, p protocol.InspectCapabilityParams) (protocol.CapabilityDetail, error) {
	c, err := s.capability(p.QualifiedName)
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
