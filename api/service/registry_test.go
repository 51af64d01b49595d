package service_test

import (
	"strings"
	"testing"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/sources"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/supervisor/supervisortest"
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/service"
	"github.com/mcpflow/mcpflow/fakes"
)

// registryFixture is a fixture whose configured connections and initial
// registry entries the test chooses; it starts as the app does, loading
// the effective sources (seeding the registry) before the supervisor.
func registryFixture(t *testing.T, configured []config.Connection, entries ...store.RegistryEntry) *fixture {
	t.Helper()
	is := is.New(t)
	is.Helper()
	st := store.NewMemory()
	for _, e := range entries {
		is.NoErr(st.PutRegistryEntry(bounded(t), e))
	}
	view, err := sources.Load(bounded(t), st, configured)
	is.NoErr(err) // the sources load
	e, err := actor.NewEngine(actor.NewEngineConfig())
	is.NoErr(err)
	sup := supervisortest.Spawn(t, e, view.All(), fakes.NewInMemory(nil), st, supervisortest.Options())
	reg := catalog.NewRegistry(nil)
	svc := &service.Service{Store: st, Catalogs: reg, Supervisor: sup, Connections: view, StoreRoot: storeRoot, RunWait: patience,
		Sources: sources.New(st, view, sup)}
	svc.Runs = runsOf(t, svc, e)
	return &fixture{svc: svc, engine: e, store: st, registry: reg, methods: svc.Methods()}
}

func stdioConn(id, command, ownership string) config.Connection {
	return config.Connection{Kind: "mcp", ID: id, Ownership: ownership, Transport: config.Transport{Kind: config.TransportStdio, Command: command}}
}

func entry(id, command string) store.RegistryEntry {
	provider, account, _ := strings.Cut(id, ".")
	return store.RegistryEntry{ID: id, Kind: "mcp", Enabled: true, Provider: provider, Account: account,
		Transport: map[string]any{"kind": "stdio", "command": command}, Metadata: map[string]any{}}
}

// events returns the kinds of the connection and source registry events
// about connection, in order.
func events(t *testing.T, f *fixture, connection string) []string {
	t.Helper()
	all, err := f.store.ListEvents(bounded(t), 0, 0)
	is.New(t).NoErr(err)
	var kinds []string
	for _, e := range all {
		lifecycle := strings.HasPrefix(e.Kind, "connection_") || strings.HasPrefix(e.Kind, "source_registry_")
		if lifecycle && e.ConnectionID != nil && *e.ConnectionID == connection {
			kinds = append(kinds, e.Kind)
		}
	}
	return kinds
}

const secretEntry = `{"id":"reg.one","transport":{"kind":"stdio","command":"reg-server","args":["--serve"],"env":{"API_TOKEN":"` + secretEnv + `"}},"metadata":{"team":"a"}}`

func TestRegistryAddListAndInspectConformAndShowNoSecret(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	added := conforming[protocol.RegistryEntryMutationResult](t, f, protocol.MethodRegistryAdd, `{"entry":`+secretEntry+`}`)
	is.Equal(added.ShadowedByConfig, false)
	is.Equal(added.Entry.ID, "reg.one")
	is.Equal(added.Entry.Kind, "mcp") // the default kind
	is.Equal(added.Entry.Enabled, true)
	is.Equal(*added.Entry.Provider, "reg") // provider and account come from the id
	is.Equal(*added.Entry.Account, "one")
	is.Equal(added.Entry.Transport["command"], "reg-server")
	is.Equal(added.Entry.Transport["env_keys"], []any{"API_TOKEN"}) // the names of env variables only
	is.Equal(added.Entry.Metadata["team"], "a")

	stored, err := f.store.GetRegistryEntry(bounded(t), "reg.one")
	is.NoErr(err)
	is.Equal(stored.Transport["env"], map[string]any{"API_TOKEN": secretEnv}) // the value is kept

	f.succeed(t, protocol.MethodRegistryAdd, `{"entry":{"id":"web.extra","enabled":false,"profile":"p","transport":{"kind":"streamable_http","url":"https://x.test/mcp","headers":{"Authorization":"`+secretHeader+`"}}}}`)
	list := conforming[protocol.ListRegistryEntriesResult](t, f, protocol.MethodRegistryList, `{}`)
	is.Equal(list.Total, 2)
	is.Equal(list.NextCursor, nil)
	is.Equal(len(list.Entries), 2)
	is.Equal(list.Entries[0].ID, "reg.one") // sorted by id
	is.Equal(*list.Entries[0].TransportKind, "stdio")
	is.Equal(list.Entries[0].Mutable, true)
	is.Equal(list.Entries[0].ConfigOwnership, nil)
	web := list.Entries[1]
	is.Equal(*web.TransportKind, "http") // the legacy kind name is stored as http
	is.Equal(web.Enabled, false)
	is.Equal(*web.Profile, "p")

	page := conforming[protocol.ListRegistryEntriesResult](t, f, protocol.MethodRegistryList, `{"limit":1}`)
	is.Equal(len(page.Entries), 1)
	is.Equal(*page.NextCursor, "1")
	page = conforming[protocol.ListRegistryEntriesResult](t, f, protocol.MethodRegistryList, `{"limit":1,"cursor":"1"}`)
	is.Equal(page.Entries[0].ID, "web.extra")
	is.Equal(page.NextCursor, nil)

	inspected := conforming[protocol.InspectRegistryEntryResult](t, f, protocol.MethodRegistryInspect, `{"source_id":"web.extra"}`)
	is.Equal(inspected.Entry.Transport["header_keys"], []any{"Authorization"})
	is.Equal(inspected.Mutable, true)
	is.Equal(inspected.ShadowedByConfig, false)

	for _, method := range []string{protocol.MethodRegistryList, protocol.MethodRegistryInspect} {
		params := `{}`
		if method == protocol.MethodRegistryInspect {
			params = `{"source_id":"reg.one"}`
		}
		data := string(f.raw(t, method, params))
		is.True(!strings.Contains(data, "s3cret")) // no env or header value is ever shown
	}
}

func TestRegistryAddRefusesDuplicatesLockedAndReservedIDs(t *testing.T) {
	is := is.New(t)
	f := newFixture(t) // fake.one is configured, locked by default
	f.succeed(t, protocol.MethodRegistryAdd, `{"entry":`+secretEntry+`}`)
	_, err := f.call(t, protocol.MethodRegistryAdd, `{"entry":`+secretEntry+`}`)
	is.True(strings.Contains(domainError(t, err, "ValueError"), "already exists"))
	_, err = f.call(t, protocol.MethodRegistryAdd, `{"entry":{"id":"fake.one","transport":{"kind":"stdio","command":"x"}}}`)
	is.True(strings.Contains(domainError(t, err, "ValueError"), "locked"))
	for _, id := range []string{"wf.admin", "wf.mcp"} {
		_, err = f.call(t, protocol.MethodRegistryAdd, `{"entry":{"id":"`+id+`","transport":{"kind":"stdio","command":"x"}}}`)
		is.True(strings.Contains(domainError(t, err, "ValueError"), "reserved"))
	}
	_, err = f.store.GetRegistryEntry(bounded(t), "fake.one")
	is.True(err != nil) // nothing refused was written
}

func TestRegistryAddRejectsMalformedEntries(t *testing.T) {
	f := newFixture(t)
	for _, params := range []string{
		`{}`,
		`{"entry":{"id":"a.b"}}`, // no transport
		`{"entry":{"id":"nodot","transport":{"kind":"stdio","command":"x"}}}`,
		`{"entry":{"id":"a.b","kind":"python","transport":{"kind":"stdio","command":"x"}}}`,
		`{"entry":{"id":"a.b","name":"x","transport":{"kind":"stdio","command":"x"}}}`,
		`{"entry":{"id":"a.b","transport":{"kind":"stdio","command":"x","shell":true}}}`,
		`{"entry":{"id":"a.b","transport":{"kind":"stdio"}}}`,
		`{"entry":{"id":"a.b","transport":{"kind":"stdio","command":"x","url":"https://x.test"}}}`,
		`{"entry":{"id":"a.b","transport":{"kind":"http","url":"ftp://x.test"}}}`,
		`{"entry":{"id":"a.b","enabled":"yes","transport":{"kind":"stdio","command":"x"}}}`,
	} {
		t.Run(params, func(t *testing.T) {
			_, err := f.call(t, protocol.MethodRegistryAdd, params)
			invalidParams(t, err)
		})
	}
	is.New(t).Equal(conforming[protocol.ListRegistryEntriesResult](t, f, protocol.MethodRegistryList, `{}`).Total, 0)
}

func TestRegistryMethodsOnAnUnknownIDAreKeyErrors(t *testing.T) {
	f := newFixture(t)
	for method, params := range map[string]string{
		protocol.MethodRegistryInspect: `{"source_id":"nope.x"}`,
		protocol.MethodRegistryUpdate:  `{"source_id":"nope.x","patch":{"enabled":false}}`,
		protocol.MethodRegistryEnable:  `{"source_id":"nope.x"}`,
		protocol.MethodRegistryDisable: `{"source_id":"nope.x"}`,
		protocol.MethodRegistryRemove:  `{"source_id":"nope.x"}`,
	} {
		t.Run(method, func(t *testing.T) {
			msg := domainError(t, f.callErr(t, method, params), "KeyError")
			is.New(t).True(strings.Contains(msg, "nope.x"))
		})
	}
}

func (f *fixture) callErr(t *testing.T, method, params string) error {
	t.Helper()
	_, err := f.call(t, method, params)
	return err
}

func TestRegistryUpdateEnableDisableAndRemove(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	f.succeed(t, protocol.MethodRegistryAdd, `{"entry":`+secretEntry+`}`)

	updated := conforming[protocol.RegistryEntryMutationResult](t, f, protocol.MethodRegistryUpdate,
		`{"source_id":"reg.one","patch":{"transport":{"kind":"http","url":"https://reg.test/mcp"},"auth_ref":"reg.creds"}}`)
	is.Equal(updated.Entry.Transport, protocol.Object{"kind": "http", "url": "https://reg.test/mcp"}) // the field is replaced whole
	is.Equal(*updated.Entry.AuthRef, "reg.creds")
	is.Equal(updated.Entry.Metadata["team"], "a") // fields the patch leaves out stay

	updated = conforming[protocol.RegistryEntryMutationResult](t, f, protocol.MethodRegistryUpdate, `{"source_id":"reg.one","patch":{"auth_ref":null,"id":"reg.one"}}`)
	is.Equal(updated.Entry.AuthRef, nil) // null clears

	invalidParams(t, f.callErr(t, protocol.MethodRegistryUpdate, `{"source_id":"reg.one","patch":{"id":"reg.two"}}`))
	invalidParams(t, f.callErr(t, protocol.MethodRegistryUpdate, `{"source_id":"reg.one","patch":{"colour":"red"}}`))
	invalidParams(t, f.callErr(t, protocol.MethodRegistryUpdate, `{"source_id":"reg.one","patch":{"transport":{"kind":"http"}}}`))
	invalidParams(t, f.callErr(t, protocol.MethodRegistryUpdate, `{"source_id":"reg.one"}`))
	stored, err := f.store.GetRegistryEntry(bounded(t), "reg.one")
	is.NoErr(err)
	is.Equal(stored.Transport["url"], "https://reg.test/mcp") // refused patches changed nothing

	disabled := conforming[protocol.RegistryEntryMutationResult](t, f, protocol.MethodRegistryDisable, `{"source_id":"reg.one"}`)
	is.Equal(disabled.Entry.Enabled, false)
	enabledAgain := conforming[protocol.RegistryEntryMutationResult](t, f, protocol.MethodRegistryEnable, `{"source_id":"reg.one"}`)
	is.Equal(enabledAgain.Entry.Enabled, true)

	removed := conforming[protocol.RemoveRegistryEntryResult](t, f, protocol.MethodRegistryRemove, `{"source_id":"reg.one"}`)
	is.Equal(removed, protocol.RemoveRegistryEntryResult{Removed: true, SourceID: "reg.one"})
	domainError(t, f.callErr(t, protocol.MethodRegistryInspect, `{"source_id":"reg.one"}`), "KeyError")
}

func TestRegistryApplyRegistersUpdatesAndRemovesLiveConnections(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	f.succeed(t, protocol.MethodRegistryAdd, `{"entry":{"id":"reg.one","transport":{"kind":"stdio","command":"reg-server"}}}`)
	// Not live before the apply.
	domainError(t, f.callErr(t, protocol.MethodConnectionsRefreshCatalog, `{"connection_id":"reg.one"}`), "KeyError")

	applied := conforming[protocol.ApplyRegistryChangesResult](t, f, protocol.MethodRegistryApply, `{}`)
	is.Equal(applied, protocol.ApplyRegistryChangesResult{Applied: true, Registered: []string{"reg.one"}, Updated: []string{}, Removed: []string{},
		ConnectionCount: 5, RegistryEntryCount: 1, AuthDiagnostics: []protocol.DependencyDiag{}})
	conns := mustCall[protocol.ListConnectionsResult](t, f, protocol.MethodConnectionsList, `{}`)
	is.Equal(conns.Total, 5)
	refreshed := mustCall[protocol.RefreshCatalogResult](t, f, protocol.MethodConnectionsRefreshCatalog, `{"connection_id":"reg.one"}`)
	is.Equal(refreshed.NodeCount, 7) // a live session on the new source

	again := conforming[protocol.ApplyRegistryChangesResult](t, f, protocol.MethodRegistryApply, `{}`)
	is.Equal(len(again.Registered)+len(again.Updated)+len(again.Removed), 0) // nothing changed

	f.succeed(t, protocol.MethodRegistryDisable, `{"source_id":"reg.one"}`)
	applied = conforming[protocol.ApplyRegistryChangesResult](t, f, protocol.MethodRegistryApply, `{}`)
	is.Equal(applied.Updated, []string{"reg.one"})
	_, err := f.call(t, protocol.MethodConnectionsRefreshCatalog, `{"connection_id":"reg.one"}`)
	is.True(err != nil) // a disabled source has no session

	f.succeed(t, protocol.MethodRegistryRemove, `{"source_id":"reg.one"}`)
	applied = conforming[protocol.ApplyRegistryChangesResult](t, f, protocol.MethodRegistryApply, `{}`)
	is.Equal(applied.Removed, []string{"reg.one"})
	is.Equal(applied.ConnectionCount, 4)
	is.Equal(applied.RegistryEntryCount, 0)
	is.Equal(mustCall[protocol.ListConnectionsResult](t, f, protocol.MethodConnectionsList, `{}`).Total, 4)
	domainError(t, f.callErr(t, protocol.MethodConnectionsRefreshCatalog, `{"connection_id":"reg.one"}`), "KeyError")

	is.Equal(events(t, f, "reg.one"), []string{audit.ConnectionRegistered, audit.ConnectionUpdated, audit.ConnectionRemoved})
}

func TestRegistryApplyReportsAuthRefsWithoutARecord(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	f.succeed(t, protocol.MethodRegistryAdd, `{"entry":{"id":"reg.one","auth_ref":"missing.creds","transport":{"kind":"stdio","command":"reg-server"}}}`)
	applied := conforming[protocol.ApplyRegistryChangesResult](t, f, protocol.MethodRegistryApply, `{}`)
	is.Equal(applied.Registered, []string{"reg.one"}) // registered all the same
	is.Equal(len(applied.AuthDiagnostics), 1)
	d := applied.AuthDiagnostics[0]
	is.Equal(d.Code, "auth_not_found")
	is.Equal(d.LogicalRef, "reg.one")
	is.True(strings.Contains(d.Message, "missing.creds"))
}

func TestLockedConfigConnectionsIgnoreTheirRegistryEntry(t *testing.T) {
	is := is.New(t)
	f := registryFixture(t, []config.Connection{stdioConn("lock.one", "config-server", "")}, entry("lock.one", "registry-server"))
	c, ok := f.svc.Connections.Get("lock.one")
	is.True(ok)
	is.Equal(c.Transport.Command, "config-server") // the config wins
	is.Equal(events(t, f, "lock.one"), []string{audit.RegistryIgnoredShadow})

	inspected := conforming[protocol.InspectRegistryEntryResult](t, f, protocol.MethodRegistryInspect, `{"source_id":"lock.one"}`)
	is.Equal(inspected.ShadowedByConfig, true)
	is.Equal(*inspected.ConfigOwnership, "locked")
	is.Equal(inspected.Mutable, false)
	for method, params := range map[string]string{
		protocol.MethodRegistryUpdate:  `{"source_id":"lock.one","patch":{"metadata":{"a":1}}}`,
		protocol.MethodRegistryDisable: `{"source_id":"lock.one"}`,
		protocol.MethodRegistryEnable:  `{"source_id":"lock.one"}`,
	} {
		is.True(strings.Contains(domainError(t, f.callErr(t, method, params), "ValueError"), "locked")) // the config owns it
	}
	applied := conforming[protocol.ApplyRegistryChangesResult](t, f, protocol.MethodRegistryApply, `{}`)
	is.Equal(len(applied.Updated), 0) // the entry changes nothing live
	c, _ = f.svc.Connections.Get("lock.one")
	is.Equal(c.Transport.Command, "config-server")
	conforming[protocol.RemoveRegistryEntryResult](t, f, protocol.MethodRegistryRemove, `{"source_id":"lock.one"}`) // the ignored entry may go
}

func TestSeedConfigConnectionsSeedTheRegistryWhichThenWins(t *testing.T) {
	is := is.New(t)
	f := registryFixture(t, []config.Connection{stdioConn("seed.one", "config-server", config.OwnershipSeed)})
	seeded, err := f.store.GetRegistryEntry(bounded(t), "seed.one")
	is.NoErr(err) // written into the registry at start
	is.Equal(seeded.Transport["command"], "config-server")
	is.Equal(events(t, f, "seed.one"), []string{audit.RegistrySeeded})

	inspected := conforming[protocol.InspectRegistryEntryResult](t, f, protocol.MethodRegistryInspect, `{"source_id":"seed.one"}`)
	is.Equal(inspected.ShadowedByConfig, true)
	is.Equal(*inspected.ConfigOwnership, "seed")
	is.Equal(inspected.Mutable, true)

	f.succeed(t, protocol.MethodRegistryUpdate, `{"source_id":"seed.one","patch":{"transport":{"kind":"stdio","command":"registry-server"}}}`)
	applied := conforming[protocol.ApplyRegistryChangesResult](t, f, protocol.MethodRegistryApply, `{}`)
	is.Equal(applied.Updated, []string{"seed.one"})
	c, _ := f.svc.Connections.Get("seed.one")
	is.Equal(c.Transport.Command, "registry-server") // the registry entry wins

	// On the next start the existing entry wins over the config.
	st := f.store
	view, err := sources.Load(bounded(t), st, []config.Connection{stdioConn("seed.one", "config-server", config.OwnershipSeed)})
	is.NoErr(err)
	c, _ = view.Get("seed.one")
	is.Equal(c.Transport.Command, "registry-server")
	is.Equal(events(t, f, "seed.one")[len(events(t, f, "seed.one"))-1], audit.RegistrySeedEntryWins)

	// Removed from the registry, a seed source falls back to the config.
	f.succeed(t, protocol.MethodRegistryRemove, `{"source_id":"seed.one"}`)
	applied = conforming[protocol.ApplyRegistryChangesResult](t, f, protocol.MethodRegistryApply, `{}`)
	is.Equal(applied.Updated, []string{"seed.one"})
	c, _ = f.svc.Connections.Get("seed.one")
	is.Equal(c.Transport.Command, "config-server")
}

func TestRegistryOnlySourcesLoadAtStart(t *testing.T) {
	is := is.New(t)
	f := registryFixture(t, nil, entry("reg.one", "reg-server"))
	conns := mustCall[protocol.ListConnectionsResult](t, f, protocol.MethodConnectionsList, `{}`)
	is.Equal(conns.Total, 1)
	is.Equal(conns.Connections[0].ID, "reg.one")
	refreshed := mustCall[protocol.RefreshCatalogResult](t, f, protocol.MethodConnectionsRefreshCatalog, `{"connection_id":"reg.one"}`)
	is.Equal(refreshed.NodeCount, 7)
}

// A registry entry's auth (kind oauth) is kept, shown, checked, and makes
// the applied connection an oauth source.
func TestRegistryEntriesKeepTheirOAuth(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	added := conforming[protocol.RegistryEntryMutationResult](t, f, protocol.MethodRegistryAdd,
		`{"entry":{"id":"linear.default","transport":{"kind":"http","url":"https://mcp.example.com/mcp"},"auth":{"kind":"oauth","scopes":["read"],"redirect_port":8976}}}`)
	is.Equal(added.Entry.Auth["kind"], "oauth")
	is.Equal(added.Entry.Auth["redirect_port"], float64(8976))
	stored, err := f.store.GetRegistryEntry(bounded(t), "linear.default")
	is.NoErr(err)
	is.Equal(stored.Auth["scopes"], []any{"read"})
	conforming[protocol.ApplyRegistryChangesResult](t, f, protocol.MethodRegistryApply, `{}`)
	conns := conforming[protocol.ListConnectionsResult](t, f, protocol.MethodConnectionsList, `{}`)
	var auth any
	for _, c := range conns.Connections {
		if c.ID == "linear.default" {
			auth = c.Metadata["auth"]
		}
	}
	is.Equal(auth, map[string]any{"kind": "oauth", "scopes": []any{"read"}, "redirect_port": float64(8976)}) // the live connection is an oauth source

	err = f.callErr(t, protocol.MethodRegistryAdd, `{"entry":{"id":"tool.one","transport":{"kind":"stdio","command":"x"},"auth":{"kind":"oauth"}}}`)
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "needs an http or sse transport"))
}
