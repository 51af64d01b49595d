package service_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/protocol"
)

func TestHealthReportsTheStoreRoot(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	res := mustCall[protocol.HealthResult](t, f, protocol.MethodHealth, `{}`)
	is.Equal(res.Status, "ok")
	is.Equal(res.StoreRoot, storeRoot)
	is.True(res.Sources != nil)        // the sources' health (an extension)
	is.Equal(res.Sources.Status, "ok") // no session fails
	is.Equal(res.Sources.Failing, 0)   // none listed
	is.Equal(res.Sources.Detail, []protocol.SourceHealth{})
	null := mustCall[protocol.HealthResult](t, f, protocol.MethodHealth, `null`)
	is.Equal(null.StoreRoot, storeRoot) // null params are no params
}

func TestConnectionsListShowsOnlyTheNamesOfEnvAndHeaders(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	data := f.raw(t, protocol.MethodConnectionsList, `{}`)
	is.True(!strings.Contains(string(data), secretEnv))    // env values never leave the server
	is.True(!strings.Contains(string(data), secretHeader)) // nor header values
	is.True(!strings.Contains(string(data), "s3cret"))

	res := mustCall[protocol.ListConnectionsResult](t, f, protocol.MethodConnectionsList, `{}`)
	is.Equal(res.Total, 4)
	byID := map[string]protocol.Connection{}
	var ids []string
	for _, c := range res.Connections {
		byID[c.ID] = c
		ids = append(ids, c.ID)
	}
	is.Equal(ids, []string{"fake.off", "fake.one", "spare.one", "web.main"}) // in configuration order, sorted by id

	one := byID["fake.one"]
	is.Equal(one.Server, "fake")
	is.Equal(one.Account, "one")
	is.True(one.Enabled)
	is.Equal(one.SourceConfigOwnership, "locked") // the default ownership
	stdio := one.Metadata["transport"].(map[string]any)
	is.Equal(stdio["kind"], "stdio")
	is.Equal(stdio["command"], "fake-server")
	is.Equal(stdio["args"], []any{"--serve"})
	is.Equal(stdio["env_keys"], []any{"API_TOKEN", "LOG_LEVEL"}) // only the names, sorted
	_, hasEnv := stdio["env"]
	is.True(!hasEnv) // no env map at all

	web := byID["web.main"]
	is.Equal(web.SourceConfigOwnership, "managed")
	is.Equal(web.Metadata["team"], "search") // configured metadata is shown
	http := web.Metadata["transport"].(map[string]any)
	is.Equal(http["url"], "https://mcp.example.test/mcp")
	is.Equal(http["header_keys"], []any{"Authorization"})
	_, hasHeaders := http["headers"]
	is.True(!hasHeaders)

	is.True(!byID["fake.off"].Enabled)
	is.Equal(byID["fake.off"].Metadata["transport"].(map[string]any)["args"], []any{}) // no args is an empty list
}

func TestConnectionStatusesReportTheRegistrysSnapshots(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	res := mustCall[protocol.ListConnectionStatusesResult](t, f, protocol.MethodConnectionStatusesList, `{}`)
	is.Equal(res.Total, 4)
	byID := map[string]protocol.ConnectionStatus{}
	for _, st := range res.Statuses {
		byID[st.ConnectionID] = st
	}

	one := byID["fake.one"]
	is.True(one.HasSnapshot)
	is.Equal(*one.FetchedAtEpochMs, int64(1_700_000_000_000))
	is.Equal(*one.MaxAgeSeconds, 300)
	is.Equal(one.NodeCount, 3) // tools
	is.Equal(one.ResourceCount, 1)
	is.Equal(one.PromptCount, 2)
	is.Equal(one.Session.State, "idle") // no session opened without use
	is.Equal(one.Session.SessionsOpened, 0)
	is.True(one.Session.LastError == nil)
	is.Equal(one.Server, "fake")
	is.Equal(one.Account, "one")

	spare := byID["spare.one"]
	is.True(!spare.HasSnapshot) // never catalogued
	is.True(spare.FetchedAtEpochMs == nil)
	is.True(spare.MaxAgeSeconds == nil)
	is.Equal(spare.NodeCount, 0)

	off := byID["fake.off"]
	is.True(off.HasSnapshot) // a disabled connection still reports its snapshot
	is.True(!off.Enabled)
	is.Equal(off.NodeCount, 1)

	is.Equal(*byID["web.main"].MaxAgeSeconds, 60)
}

func TestConnectionStatusesCountAFreshSnapshotAndAnOpenedSession(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	counterDeployment(t, f)
	is.Equal(startRun(t, f, `{"deployment_id":"count"}`).Status, "completed")

	snaps := snapshots()
	fresh := snaps[0]
	fresh.Tools = fresh.Tools[:1]
	fresh.FetchedAtEpochMs++
	f.registry.Put(fresh)

	res := conforming[protocol.ListConnectionStatusesResult](t, f, protocol.MethodConnectionStatusesList, `{}`) // the session fields keep the manifest's shape
	for _, st := range res.Statuses {
		if st.ConnectionID != "fake.one" {
			continue
		}
		is.Equal(st.NodeCount, 1) // counts follow the registry
		is.Equal(*st.FetchedAtEpochMs, fresh.FetchedAtEpochMs)
		is.Equal(st.Session.SessionsOpened, 1) // the run opened the upstream session
		is.Equal(st.Session.State, "open")
		is.Equal(st.Session.Generation, int64(1))
		is.Equal(st.Session.Restarts, 0)
		is.Equal(st.Session.CallsInFlight, 0)
		is.Equal(st.Session.MissedPings, 0)
		is.True(st.Session.LastSuccessAtEpochMs != nil) // the run's call
		is.True(st.Session.NextAttemptAtEpochMs == nil)
		return
	}
	is.Fail() // fake.one has a status row
}

func TestRefreshCatalogRejectsUnknownConnectionsAndKeys(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	_, err := f.call(t, protocol.MethodConnectionsRefreshCatalog, `{"connection_id":"nowhere.one"}`)
	is.True(strings.Contains(domainError(t, err, "KeyError"), "nowhere.one")) // names the connection
	_, err = f.call(t, protocol.MethodConnectionsRefreshCatalog, `{"connection_id":"fake.one","force":true}`)
	invalidParams(t, err) // unknown keys
	_, err = f.call(t, protocol.MethodConnectionsRefreshCatalog, `{}`)
	invalidParams(t, err) // connection_id is required
	_, err = f.call(t, protocol.MethodConnectionsRefreshCatalog, `{"connection_id":"fake.off"}`)
	domainError(t, err, "RuntimeError") // a disabled connection cannot be listed
}

func TestRefreshCatalogListsTheUpstreamAndStoresTheSnapshot(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	res := mustCall[protocol.RefreshCatalogResult](t, f, protocol.MethodConnectionsRefreshCatalog, `{"connection_id":"fake.one"}`)
	is.Equal(res.ConnectionID, "fake.one")
	is.Equal(res.NodeCount, 7) // counter, echo, idle, overlap, sleep, fail, crash
	is.True(res.FetchedAtEpochMs > 0)
	stored, err := f.store.GetCatalog(bounded(t), "fake.one")
	is.NoErr(err) // the supervisor stored the snapshot
	is.Equal(len(stored.Tools), 7)
}
