package service_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/protocol"
)

func diagnoseSource(t *testing.T, f *fixture, id string) protocol.SourceDiagnosis {
	t.Helper()
	return conforming[protocol.SourceDiagnosis](t, f, protocol.MethodSourcesDiagnose, `{"source_id":"`+id+`"}`)
}

// reconfigureConnections replaces the fixture's configured connections with a
// changed copy.
func reconfigureConnections(f *fixture, change func([]config.Connection) []config.Connection) {
	conns := append([]config.Connection(nil), f.svc.Connections.All()...)
	f.svc.Connections.Set(change(conns))
}

// showsNoSecret asserts that an answer shows no configured secret nor how a
// source is reached.
func showsNoSecret(t *testing.T, data []byte) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	for _, secret := range []string{"s3cret", "mcp.example.test", "fake-server", "API_TOKEN"} {
		if strings.Contains(string(data), secret) {
			t.Logf("%s shows %q", data, secret)
			is.Fail() // no secret, URL, command or env name
		}
	}
}

func TestSourcesListShowsPlatformSourcesAndEveryConnectionSortedByID(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	res := conforming[protocol.ListSourcesResult](t, f, protocol.MethodSourcesList, `{}`)
	is.Equal(res.Total, 7)
	is.True(res.NextCursor == nil)
	var ids []string
	byID := map[string]protocol.SourceStatus{}
	for _, s := range res.Sources {
		ids = append(ids, s.ID)
		byID[s.ID] = s
	}
	is.Equal(ids, []string{"fake.off", "fake.one", "spare.one", "web.main", "wf.recipes", "wf.source", "wf.std"})

	one := byID["fake.one"]
	is.Equal(one.Kind, "connection")
	is.True(one.Enabled)
	is.Equal(one.Policy, protocol.SourcePolicy{Platform: false, BindingRequired: true})
	is.True(one.Permissions.CallsUpstream)
	is.Equal(one.NodeSpecCount, 3) // the catalog's tools, as node specs
	is.Equal(one.ToolCount, 3)     // and as tools: they are its MCP tools
	is.Equal(one.Preview.Tools, []string{"fake.one.counter", "fake.one.echo", "fake.one.fail"})
	is.Equal(one.Preview.NodeSpecs, []string{"fake.one.counter", "fake.one.echo", "fake.one.fail"})
	is.Equal(one.HasMore.NodeSpecs, false)
	is.Equal(one.ResourceCount, 1)
	is.Equal(one.Preview.Resources, []string{"fake.one.readme"})
	is.Equal(one.Preview.Prompts, []string{"fake.one.bye", "fake.one.greet"})

	is.Equal(byID["fake.off"].Enabled, false)    // a disabled connection is a source too
	is.Equal(byID["spare.one"].NodeSpecCount, 0) // no catalog yet

	std := byID["wf.std"]
	is.Equal(std.Kind, "system")
	is.Equal(std.Policy, protocol.SourcePolicy{Platform: true, BindingRequired: false})
	is.True(std.Permissions.SafeForWorkflow)
	is.Equal(std.ReducerCount, 6)
	is.Equal(std.Preview.Reducers, []string{"wf.std.add", "wf.std.append", "wf.std.max"})
	is.True(std.HasMore.NodeSpecs)
	is.Equal(byID["wf.source"].Preview.NodeSpecs, []string{"wf.source.read_resource"})
	is.True(byID["wf.source"].Permissions.CallsUpstream)
	is.Equal(byID["wf.recipes"].Preview.NodeSpecs, []string{"wf.recipes.extract_text_content"})

	page := conforming[protocol.ListSourcesResult](t, f, protocol.MethodSourcesList, `{"limit":2,"cursor":"2"}`)
	is.Equal(page.Sources[0].ID, "spare.one")
	is.Equal(*page.NextCursor, "4")
	is.Equal(page.Total, 7)
	_, err := f.call(t, protocol.MethodSourcesList, `{"cursor":"-1"}`)
	domainError(t, err, "ValueError")
	showsNoSecret(t, f.raw(t, protocol.MethodSourcesList, `{}`))
}

func TestSourcesInspectShowsTheInventoryAndTheDiagnosis(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	res := conforming[protocol.InspectSourceResult](t, f, protocol.MethodSourcesInspect, `{"source_id":"fake.one"}`)
	is.Equal(res.ID, "fake.one")
	is.Equal(res.Capabilities.NodeSpecs, []string{"fake.one.counter", "fake.one.echo", "fake.one.fail"})
	echo := res.Capabilities.NodeSpecDetails[1]
	is.Equal(echo.Name, "fake.one.echo")
	is.Equal(echo.Outcomes, []string{"ok", "error"})
	is.Equal(echo.InputSchema["required"], []any{"message"})
	is.True(echo.IsAsync)
	is.Equal(res.Diagnostics.Status, "ok")
	is.Equal(*res.Diagnostics.Transport.Kind, "stdio")
	showsNoSecret(t, f.raw(t, protocol.MethodSourcesInspect, `{"source_id":"fake.one"}`))
	showsNoSecret(t, f.raw(t, protocol.MethodSourcesInspect, `{"source_id":"web.main"}`))

	std := conforming[protocol.InspectSourceResult](t, f, protocol.MethodSourcesInspect, `{"source_id":"wf.std"}`)
	is.Equal(len(std.Capabilities.ReducerDetails), 6)
	is.Equal(std.Capabilities.ReducerDetails[0].Ref, protocol.CapabilityRef{Source: "wf.std", CapabilityKey: "add"})
	is.True(std.Capabilities.NodeSpecDetails[0].InputSchema["type"] == "object")
	is.Equal(std.Diagnostics.Status, "ok") // a platform source has nothing to go wrong
	is.True(std.Diagnostics.Transport == nil)

	for _, method := range []string{protocol.MethodSourcesInspect, protocol.MethodSourcesDiagnose} {
		_, err := f.call(t, method, `{"source_id":"nope.one"}`)
		domainError(t, err, "KeyError")
	}
}

func TestSourcesDiagnoseReportsTransportAuthAndCatalog(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	one := diagnoseSource(t, f, "fake.one")
	is.Equal(one.SourceID, "fake.one")
	is.Equal(one.Status, "ok")
	is.Equal(*one.Enabled, true)
	is.Equal(*one.Transport, protocol.SourceTransportDiagnosis{Kind: ptr("stdio"), Configured: true})
	is.Equal(*one.Auth, protocol.SourceAuthDiagnosis{TransportSupported: true}) // no auth_ref and no record: no auth
	is.Equal(one.Catalog.HasSnapshot, true)
	is.Equal(*one.Catalog.FetchedAtEpochMs, int64(1_700_000_000_000))
	is.Equal(one.Catalog.NodeCount, 3)
	is.Equal(one.Catalog.PromptCount, 2)
	is.Equal(len(one.Diagnostics), 0)

	spare := diagnoseSource(t, f, "spare.one")
	is.Equal(*spare.Catalog, protocol.SourceCatalogDiagnosis{}) // no snapshot
	is.Equal(*diagnoseSource(t, f, "fake.off").Enabled, false)

	web := diagnoseSource(t, f, "web.main")
	is.Equal(*web.Transport.Kind, "http") // the typed kind (the reference misread it, Appendix C.7)
	is.Equal(web.Status, "ok")
}

func TestSourcesDiagnoseFindsAuthAndTransportProblems(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	ctx := bounded(t)
	// web.main's own record (used without an auth_ref) has a stdio scheme.
	is.NoErr(f.store.SaveAuth(ctx, store.AuthRecord{ID: "web.main", Scheme: "env", Payload: map[string]any{"TOKEN": "s3cret-auth-value"}}))
	// fake.one's record suits its stdio transport.
	is.NoErr(f.store.SaveAuth(ctx, store.AuthRecord{ID: "fake-env", Scheme: "env", Payload: map[string]any{"TOKEN": "s3cret-auth-value"}}))
	reconfigureConnections(f, func(conns []config.Connection) []config.Connection {
		for i := range conns {
			switch conns[i].ID {
			case "fake.one":
				conns[i].AuthRef = ptr("fake-env")
			case "spare.one":
				conns[i].AuthRef = ptr("missing-creds")
			}
		}
		return append(conns, config.Connection{Kind: "mcp", ID: "bare.one"})
	})

	web := diagnoseSource(t, f, "web.main")
	is.Equal(web.Status, "error")
	is.Equal(*web.Auth, protocol.SourceAuthDiagnosis{AuthRef: ptr("web.main"), RecordPresent: ptr(true), Scheme: ptr("env"), TransportSupported: false})
	is.Equal(diagCodes(web.Diagnostics), []string{"error:auth_scheme_not_supported"})
	is.Equal(*web.Diagnostics[0].BoundSource, "web.main")
	showsNoSecret(t, f.raw(t, protocol.MethodSourcesDiagnose, `{"source_id":"web.main"}`))
	is.True(!strings.Contains(string(f.raw(t, protocol.MethodSourcesInspect, `{"source_id":"web.main"}`)), "TOKEN")) // not even the payload's keys

	one := diagnoseSource(t, f, "fake.one")
	is.Equal(one.Status, "ok")
	is.Equal(*one.Auth, protocol.SourceAuthDiagnosis{AuthRef: ptr("fake-env"), RecordPresent: ptr(true), Scheme: ptr("env"), TransportSupported: true})

	spare := diagnoseSource(t, f, "spare.one")
	is.Equal(spare.Status, "error")
	is.Equal(*spare.Auth, protocol.SourceAuthDiagnosis{AuthRef: ptr("missing-creds"), RecordPresent: ptr(false), TransportSupported: true})
	is.Equal(diagCodes(spare.Diagnostics), []string{"error:auth_not_found"})
	is.Equal(spare.Diagnostics[0].LogicalRef, "missing-creds")

	bare := diagnoseSource(t, f, "bare.one")
	is.Equal(bare.Status, "error")
	is.Equal(*bare.Transport, protocol.SourceTransportDiagnosis{Kind: nil, Configured: false})
	is.Equal(diagCodes(bare.Diagnostics), []string{"error:source_transport_missing"})

	inspected := conforming[protocol.InspectSourceResult](t, f, protocol.MethodSourcesInspect, `{"source_id":"spare.one"}`)
	is.Equal(inspected.Diagnostics.Status, "error") // inspect embeds the diagnosis
}
