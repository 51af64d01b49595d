package storetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
)

func testArtifacts(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	a := artifact("wf", 1, "workflow", "Fetch", ptr("Fetches a page"))

	created, err := s.SaveArtifact(ctx, a)
	is.NoErr(err)
	is.True(created)
	created, err = s.SaveArtifact(ctx, a)
	is.NoErr(err)
	is.True(!created) // the same content again is a no-op

	changed := a
	changed.Title = "Fetch, changed"
	_, err = s.SaveArtifact(ctx, changed)
	is.True(errors.Is(err, store.ErrConflict)) // a saved version is immutable

	v2 := a
	v2.Version = 2
	v2.Title = "Fetch, changed"
	created, err = s.SaveArtifact(ctx, v2)
	is.NoErr(err)
	is.True(created) // a new version is a new artifact

	got, err := s.GetArtifact(ctx, "wf", 1)
	is.NoErr(err)
	is.Equal(got, a)
	_, err = s.GetArtifact(ctx, "wf", 3)
	is.True(errors.Is(err, store.ErrNotFound))

	deleted, err := s.DeleteArtifact(ctx, "wf", 1)
	is.NoErr(err)
	is.True(deleted)
	deleted, err = s.DeleteArtifact(ctx, "wf", 1)
	is.NoErr(err)
	is.True(!deleted)
	_, err = s.GetArtifact(ctx, "wf", 1)
	is.True(errors.Is(err, store.ErrNotFound))
	got, err = s.GetArtifact(ctx, "wf", 2)
	is.NoErr(err)
	is.Equal(got, v2) // other versions stay
}

func testListArtifacts(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	// Saved out of order: the list sorts by (id, version).
	for _, a := range []store.Artifact{
		artifact("gamma", 1, "workflow", "Ünïcode Report", ptr("Weekly")),
		artifact("alpha", 2, "workflow", "Send Email", ptr("Notifies the team")),
		artifact("beta", 1, "wrapper", "Backup Files", nil),
		artifact("alpha", 1, "workflow", "Send Email", ptr("Notifies the team")),
	} {
		_, err := s.SaveArtifact(ctx, a)
		is.NoErr(err)
	}

	for _, tt := range []struct {
		name  string
		query store.ArtifactQuery
		want  []string
		total int
	}{
		{"all", store.ArtifactQuery{}, []string{"alpha@1", "alpha@2", "beta@1", "gamma@1"}, 4},
		{"kind", store.ArtifactQuery{Kind: "wrapper"}, []string{"beta@1"}, 1},
		{"query in id", store.ArtifactQuery{Query: "ALPHA"}, []string{"alpha@1", "alpha@2"}, 2},
		{"query in title", store.ArtifactQuery{Query: "backup"}, []string{"beta@1"}, 1},
		{"query in description", store.ArtifactQuery{Query: "TEAM"}, []string{"alpha@1", "alpha@2"}, 2},
		{"query in kind", store.ArtifactQuery{Query: "Wrap"}, []string{"beta@1"}, 1},
		{"query folds beyond ASCII", store.ArtifactQuery{Query: "ÜNÏ"}, []string{"gamma@1"}, 1},
		{"no description is not null", store.ArtifactQuery{Query: "null"}, []string{}, 0},
		{"query and kind", store.ArtifactQuery{Query: "workflow", Kind: "wrapper"}, []string{}, 0},
		{"filtered page", store.ArtifactQuery{Query: "e", Kind: "workflow", Offset: 1, Limit: 1}, []string{"alpha@2"}, 3},
		{"last page", store.ArtifactQuery{Offset: 3, Limit: 5}, []string{"gamma@1"}, 4},
		{"past the end", store.ArtifactQuery{Offset: 9}, []string{}, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			list, total, err := s.ListArtifacts(ctx, tt.query)
			is.NoErr(err)
			is.Equal(artifactKeys(list), tt.want)
			is.Equal(total, tt.total)
		})
	}

	list, _, err := s.ListArtifacts(ctx, store.ArtifactQuery{Query: "weekly"})
	is.NoErr(err)
	is.Equal(list, []store.Artifact{artifact("gamma", 1, "workflow", "Ünïcode Report", ptr("Weekly"))}) // whole records
}

func artifactKeys(list []store.Artifact) []string {
	keys := []string{}
	for _, a := range list {
		keys = append(keys, fmt.Sprintf("%s@%d", a.ID, a.Version))
	}
	return keys
}
