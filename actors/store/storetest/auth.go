package storetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
)

func testAuthRecords(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	list, err := s.ListAuth(ctx)
	is.NoErr(err)
	is.Equal(len(list), 0)

	for _, id := range []string{"auth-b", "auth-a"} {
		is.NoErr(s.SaveAuth(ctx, authRecord(id)))
	}
	replaced := authRecord("auth-a")
	replaced.Scheme = "headers"
	replaced.Payload = map[string]any{"headers": map[string]any{"X-Api-Key": secret + "-rotated"}}
	replaced.Metadata = map[string]any{}
	is.NoErr(s.SaveAuth(ctx, replaced)) // saving replaces

	got, err := s.GetAuth(ctx, "auth-a")
	is.NoErr(err)
	is.Equal(got, replaced)
	_, err = s.GetAuth(ctx, "auth-missing")
	is.True(errors.Is(err, store.ErrNotFound))
	is.True(strings.Contains(err.Error(), `"auth-missing"`)) // errors name the record

	list, err = s.ListAuth(ctx)
	is.NoErr(err)
	is.Equal(list, []store.AuthRecord{replaced, authRecord("auth-b")}) // sorted by id

	deleted, err := s.DeleteAuth(ctx, "auth-a")
	is.NoErr(err)
	is.True(deleted)
	deleted, err = s.DeleteAuth(ctx, "auth-a")
	is.NoErr(err)
	is.True(!deleted) // already gone
	_, err = s.GetAuth(ctx, "auth-a")
	is.True(errors.Is(err, store.ErrNotFound))
	list, err = s.ListAuth(ctx)
	is.NoErr(err)
	is.Equal(list, []store.AuthRecord{authRecord("auth-b")})
}

// testAuthIDs saves records under valid and invalid ids: the invalid are
// refused with ErrInvalid, and no error shows a payload value.
func testAuthIDs(t *testing.T, s store.Store) {
	is := is.New(t)
	ctx := t.Context()
	valid := []string{"_", "0", "_private", "github.com-acme_1", "a..b", "A-"}
	for _, id := range valid {
		is.NoErr(s.SaveAuth(ctx, authRecord(id)))
	}
	for _, id := range []string{"", ".hidden", "-flag", "a/b", "../up", "a b", "ä", "a\n"} {
		err := s.SaveAuth(ctx, authRecord(id))
		is.True(errors.Is(err, store.ErrInvalid))       // not an auth id
		is.True(!strings.Contains(err.Error(), secret)) // the error keeps the payload out
	}
	list, err := s.ListAuth(ctx)
	is.NoErr(err)
	is.Equal(len(list), len(valid)) // only valid ids are stored
}
