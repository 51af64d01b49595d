package storetest

import (
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/store"
)

func testDeployments(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	for _, id := range []string{"dep-b", "dep-a"} {
		is.NoErr(s.SaveDeployment(ctx, deployment(id)))
	}
	replaced := deployment("dep-a")
	replaced.DriftPolicy = "warn"
	is.NoErr(s.SaveDeployment(ctx, replaced)) // saving replaces

	got, err := s.GetDeployment(ctx, "dep-a")
	is.NoErr(err)
	is.Equal(got, replaced)
	_, err = s.GetDeployment(ctx, "dep-missing")
	is.True(errors.Is(err, store.ErrNotFound))

	list, err := s.ListDeployments(ctx)
	is.NoErr(err)
	is.Equal(list, []store.Deployment{replaced, deployment("dep-b")})

	deleted, err := s.DeleteDeployment(ctx, "dep-a")
	is.NoErr(err)
	is.True(deleted)
	deleted, err = s.DeleteDeployment(ctx, "dep-a")
	is.NoErr(err)
	is.True(!deleted)
	list, err = s.ListDeployments(ctx)
	is.NoErr(err)
	is.Equal(list, []store.Deployment{deployment("dep-b")})
}

func testCatalogs(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	list, err := s.ListCatalogs(ctx)
	is.NoErr(err)
	is.Equal(len(list), 0)

	for _, id := range []string{"conn-b", "conn-a"} {
		is.NoErr(s.SaveCatalog(ctx, snapshot(id)))
	}
	refreshed := snapshot("conn-a")
	refreshed.FetchedAtEpochMs = 5_000
	refreshed.Tools = append(refreshed.Tools, catalog.Tool{Name: "post", InputSchema: catalog.Object{}})
	is.NoErr(s.SaveCatalog(ctx, refreshed)) // the last snapshot wins

	got, err := s.GetCatalog(ctx, "conn-a")
	is.NoErr(err)
	is.Equal(got, refreshed)
	_, err = s.GetCatalog(ctx, "conn-missing")
	is.True(errors.Is(err, store.ErrNotFound))

	list, err = s.ListCatalogs(ctx)
	is.NoErr(err)
	is.Equal(list, []catalog.Snapshot{refreshed, snapshot("conn-b")})
}
