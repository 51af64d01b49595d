package sources_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/sources"
	"github.com/mcpflow/mcpflow/actors/store"
)

func tool(name, description string) catalog.Tool {
	return catalog.Tool{Name: name, Description: description, InputSchema: catalog.Object{"type": "object"}}
}

// A stored catalog is published and what changed is recorded: the first
// one's tools as added, then changed and removed tools, with drift for
// each changed or removed one a deployment binds.
func TestCatalogSinkRecordsWhatChangedAndTheDriftOfBoundTools(t *testing.T) {
	is := is.New(t)
	ctx := bounded(t)
	st := store.NewMemory()
	_, err := st.SaveArtifact(ctx, store.Artifact{ID: "a", Version: 1, Kind: "workflow", RequiredCapabilities: []store.RequiredCapability{
		{Ref: store.CapabilityRef{Source: "search", CapabilityKey: "echo"}, Kind: "node_spec"},
	}})
	is.NoErr(err)
	is.NoErr(st.SaveDeployment(ctx, store.Deployment{ID: "d", ArtifactID: "a", ArtifactVersion: 1, DriftPolicy: "block",
		Bindings: []store.Binding{{LogicalSource: "search", ConcreteSource: "fake.one"}}}))
	reg := catalog.NewRegistry(nil)
	sink := sources.NewCatalogSink(st, reg)

	is.NoErr(sink.SaveCatalog(ctx, catalog.Snapshot{ConnectionID: "fake.one", FetchedAtEpochMs: 1, Tools: []catalog.Tool{tool("echo", "v1"), tool("other", "v1")}}))
	is.NoErr(sink.SaveCatalog(ctx, catalog.Snapshot{ConnectionID: "fake.one", FetchedAtEpochMs: 2, Tools: []catalog.Tool{tool("echo", "v2"), tool("new", "v1")}}))
	have, ok := reg.Get("fake.one")
	is.True(ok)
	is.Equal(have.FetchedAtEpochMs, int64(2)) // the last stored is published

	evs, err := st.ListEvents(ctx, 0, 0)
	is.NoErr(err)
	is.Equal(kinds(t, st), []string{audit.ToolsChanged, audit.ToolsChanged, audit.CapabilityDrift})
	is.Equal(evs[0].Payload["added"], []any{"fake.one.echo", "fake.one.other"}) // the first catalog's tools are new
	is.Equal(evs[1].Payload["added"], []any{"fake.one.new"})
	is.Equal(evs[1].Payload["changed"], []any{"fake.one.echo"})
	is.Equal(evs[1].Payload["removed"], []any{"fake.one.other"})
	is.Equal(*evs[2].CapabilityID, "fake.one.echo") // only the bound tool drifts
	is.Equal(evs[2].Payload["deployments"], []any{"d"})
}

// A snapshot another node stored joins the registry unless the registry
// has a later one; Reload and ReloadAll read the store's.
func TestCatalogSinkPublishesOnlyLaterSnapshotsAndReloadsTheStores(t *testing.T) {
	is := is.New(t)
	ctx := bounded(t)
	st := store.NewMemory()
	reg := catalog.NewRegistry(nil)
	sink := sources.NewCatalogSink(st, reg)
	fetched := func(id string) int64 {
		s, ok := reg.Get(id)
		is.True(ok)
		return s.FetchedAtEpochMs
	}

	sink.Publish(catalog.Snapshot{ConnectionID: "fake.one", FetchedAtEpochMs: 5})
	sink.Publish(catalog.Snapshot{ConnectionID: "fake.one", FetchedAtEpochMs: 3})
	is.Equal(fetched("fake.one"), int64(5)) // an earlier snapshot does not replace a later one
	is.Equal(kinds(t, st), []string{})      // and publishing records nothing

	is.NoErr(st.SaveCatalog(ctx, catalog.Snapshot{ConnectionID: "fake.two", FetchedAtEpochMs: 7}))
	is.NoErr(sink.Reload(ctx, "fake.two"))
	is.Equal(fetched("fake.two"), int64(7))
	is.NoErr(sink.Reload(ctx, "nobody.here")) // a connection with no catalog yet is no failure

	is.NoErr(st.SaveCatalog(ctx, catalog.Snapshot{ConnectionID: "fake.three", FetchedAtEpochMs: 9}))
	is.NoErr(sink.ReloadAll(ctx))
	is.Equal(fetched("fake.three"), int64(9))
}

// A change of resource templates is a resources_changed event of its
// own, counting templates; the registry keeps them with the snapshot.
func TestCatalogSinkRecordsAChangeOfResourceTemplates(t *testing.T) {
	is := is.New(t)
	ctx := bounded(t)
	st := store.NewMemory()
	reg := catalog.NewRegistry(nil)
	sink := sources.NewCatalogSink(st, reg)
	one := catalog.Snapshot{ConnectionID: "fake.one", FetchedAtEpochMs: 1, Resources: []catalog.Resource{{URI: "demo://a"}}}
	is.NoErr(sink.SaveCatalog(ctx, one))
	two := one
	two.FetchedAtEpochMs, two.ResourceTemplates = 2, []catalog.ResourceTemplate{{URITemplate: "demo://item/{id}", Name: "item"}}
	is.NoErr(sink.SaveCatalog(ctx, two))
	have, ok := reg.Get("fake.one")
	is.True(ok)
	is.Equal(have.ResourceTemplates, two.ResourceTemplates)

	evs, err := st.ListEvents(ctx, 0, 0)
	is.NoErr(err)
	is.Equal(kinds(t, st), []string{audit.ResourcesChanged, audit.ResourcesChanged}) // the resource, then the template
	is.Equal(evs[1].Payload["added"], []any{"demo://item/{id}"})
	is.Equal(evs[1].Payload["template_count"], 1.0)
}
