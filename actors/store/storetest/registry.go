package storetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
)

func testSourceRegistry(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	list, err := s.ListRegistryEntries(ctx)
	is.NoErr(err)
	is.Equal(len(list), 0)

	for _, id := range []string{"src-b", "src-a", "src-c"} {
		is.NoErr(s.PutRegistryEntry(ctx, registryEntry(id)))
	}
	replaced := registryEntry("src-a")
	replaced.Enabled = false
	replaced.Profile = ptr("work")
	replaced.AuthRef = nil
	replaced.Transport = map[string]any{"kind": "stdio", "command": "mcp-server", "args": []any{"--verbose"}}
	is.NoErr(s.PutRegistryEntry(ctx, replaced)) // putting replaces

	got, err := s.GetRegistryEntry(ctx, "src-a")
	is.NoErr(err)
	is.Equal(got, replaced)
	is.Equal(got.AuthRef, nil) // an absent auth_ref stays absent
	_, err = s.GetRegistryEntry(ctx, "src-missing")
	is.True(errors.Is(err, store.ErrNotFound))
	is.True(strings.Contains(err.Error(), `"src-missing"`)) // errors name the record

	list, err = s.ListRegistryEntries(ctx)
	is.NoErr(err)
	is.Equal(list, []store.RegistryEntry{replaced, registryEntry("src-b"), registryEntry("src-c")}) // sorted by id

	deleted, err := s.DeleteRegistryEntry(ctx, "src-b")
	is.NoErr(err)
	is.True(deleted)
	deleted, err = s.DeleteRegistryEntry(ctx, "src-b")
	is.NoErr(err)
	is.True(!deleted) // already gone
	_, err = s.GetRegistryEntry(ctx, "src-b")
	is.True(errors.Is(err, store.ErrNotFound))
	list, err = s.ListRegistryEntries(ctx)
	is.NoErr(err)
	is.Equal(list, []store.RegistryEntry{replaced, registryEntry("src-c")})
}
